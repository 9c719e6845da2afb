#include "views/top/top_frame.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tv::top_frame_test {
namespace {

std::vector<std::string> Texts(const std::vector<TopLine>& lines) {
  std::vector<std::string> out;
  for (const TopLine& line : lines) {
    std::string text;
    for (const TopSpan& span : line) text += span.text;
    out.push_back(text);
  }
  return out;
}

int Find(const std::vector<std::string>& lines, std::string_view what) {
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(what) != std::string::npos) return static_cast<int>(i);
  }
  return -1;
}

TopProcess Process(int pid, int ppid, std::string command, int session, double cpu,
                   std::optional<double> gpu_memory) {
  TopProcess p;
  p.pid = pid;
  p.ppid = ppid;
  p.user = "ana";
  p.name = command.substr(0, command.find(' '));
  p.command = std::move(command);
  p.session = session;
  p.cpu_cores = cpu;
  p.rss_bytes = 300e6;
  if (gpu_memory) {
    p.gpus = {0};
    p.gpu_memory_bytes = gpu_memory;
    p.gpu_sm_util_ratio = 0.7;
  }
  return p;
}

// Two GPUs (the job on the first, someone else on the second), one session
// with a loader worker, and a process outside any session.
TopModel Model() {
  TopModel m;
  m.t = 1800000100;
  m.host = "node7";
  m.cpus = 8;
  m.host_sample.cpu_util_ratio = 0.35;
  m.host_sample.core_util_ratio = {0.9, 0.1, 0.5, 0.2, 0, 0, 1, 0.3};
  m.host_sample.memory_total_bytes = 64e9;
  m.host_sample.memory_used_bytes = 20e9;
  for (int i = 0; i < 2; ++i) {
    TopGpu gpu;
    gpu.name = "NVIDIA H100 80GB HBM3";
    gpu.sample.index = gpu.sample.physical_index = i;
    gpu.sample.util_ratio = i == 0 ? 0.82 : 0.05;
    gpu.sample.memory_used_bytes = i == 0 ? 30e9 : 70e9;
    gpu.sample.memory_total_bytes = 80e9;
    gpu.sample.temperature_celsius = i == 0 ? 71 : 86;
    gpu.sample.power_watts = 350;
    gpu.sample.power_limit_watts = 700;
    if (i == 1) gpu.sample.throttle_thermal_ratio = 1;
    if (i == 0) gpu.sessions_memory_bytes = 28e9;
    m.gpus.push_back(gpu);
  }
  TopSession s;
  s.pid = 4000;
  s.job_pid = 4001;
  s.mode = "run";
  s.name = "resnet";
  s.command = "python train.py --epochs 90";
  s.start_t = m.t - 3725;
  s.epoch = 12;
  s.step = 48213;
  s.steps_per_second = 13.57;
  s.data_wait_ratio = 0.42;
  s.health_score = 64;
  s.findings = {"input-bound (warning)"};
  m.sessions.push_back(s);
  m.processes = {Process(4001, 4000, "python train.py --epochs 90", 0, 1.0, 28e9),
                 Process(4010, 4001, "python -c loader worker", 0, 0.9, std::nullopt),
                 Process(4011, 4001, "python -c loader worker two", 0, 0.2, std::nullopt),
                 Process(7000, 1, "someone_else serve.py", -1, 0.1, 69e9)};
  m.processes[3].gpus = {1};
  return m;
}

std::vector<std::string> Render(const TopModel& m, TopUi* ui, int columns, int rows,
                                bool unicode = true) {
  TopHistory history;
  for (int i = 0; i < 30; ++i) history.Add(m);
  return Texts(RenderTop(m, history, ui, columns, rows, unicode));
}

TEST(TopFrame, ShowsEveryGpuTheSessionAndItsProcessesWithTheirJob) {
  TopUi ui;
  std::vector<std::string> lines = Render(Model(), &ui, 140, 40);
  ASSERT_EQ(lines.size(), 40u);
  EXPECT_NE(lines[0].find("node7"), std::string::npos);
  int gpu1 = Find(lines, "GPU 1");
  ASSERT_GE(gpu1, 0);
  EXPECT_NE(lines[gpu1].find("86°C"), std::string::npos);
  EXPECT_NE(lines[gpu1].find("throttled: thermal"), std::string::npos);
  int session = Find(lines, "resnet  python train.py --epochs 90");
  ASSERT_GE(session, 0);
  // Elapsed, epoch, step, steps/s, data wait, health.
  for (const char* cell : {"1:02:05", " 12 ", "48213", "13.57", "42%", " 64 "}) {
    EXPECT_NE(lines[session].find(cell), std::string::npos) << cell << " in " << lines[session];
  }
  EXPECT_NE(lines[session + 1].find("finding input-bound (warning)"), std::string::npos);
  int main_process = Find(lines, "  4001 ana");
  ASSERT_GE(main_process, 0);
  EXPECT_NE(lines[main_process].find("resnet"), std::string::npos);
  EXPECT_NE(lines[main_process].find("26.1 GiB"), std::string::npos);
  int other = Find(lines, "  7000 ana");
  ASSERT_GE(other, 0);
  EXPECT_NE(lines[other].find(" - "), std::string::npos);  // no job
  EXPECT_EQ(lines.back().find("↑↓ select"), 0u);
}

TEST(TopFrame, EveryLineFitsTheWidthAndTheFrameTheHeight) {
  TopModel m = Model();
  for (int i = 0; i < 60; ++i) {
    m.processes.push_back(Process(5000 + i, 4001, "python worker " + std::string(200, 'x'), 0,
                                  0.01 * i, std::nullopt));
  }
  for (int columns : {60, 61, 80, 100, 133, 250}) {
    for (int rows : {10, 11, 16, 24, 50}) {
      TopUi ui;
      std::vector<std::string> lines = Render(m, &ui, columns, rows);
      ASSERT_EQ(static_cast<int>(lines.size()), rows) << columns << "x" << rows;
      for (const std::string& line : lines) {
        EXPECT_LE(TextColumns(line), columns) << columns << "x" << rows << ": " << line;
      }
      EXPECT_GE(Find(lines, "PROCESSES"), 0) << columns << "x" << rows;
    }
  }
}

TEST(TopFrame, ATooSmallTerminalGetsOneLineSayingSo) {
  TopUi ui;
  for (auto [columns, rows] : {std::pair{59, 40}, std::pair{120, 9}, std::pair{20, 3}}) {
    std::vector<std::string> lines = Render(Model(), &ui, columns, rows);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].find("terminal too small"), 0u) << lines[0];
    EXPECT_LE(TextColumns(lines[0]), columns);
  }
}

TEST(TopFrame, TheTreeShowsChildrenUnderTheirParentSortedAmongSiblings) {
  TopUi ui;
  ui.sort = TopSort::kCpu;
  std::vector<std::string> lines = Render(Model(), &ui, 140, 40);
  int parent = Find(lines, "  4001 ana");
  int busy_child = Find(lines, "  4010 ana");
  int idle_child = Find(lines, "  4011 ana");
  ASSERT_GE(parent, 0);
  EXPECT_EQ(busy_child, parent + 1);
  EXPECT_EQ(idle_child, parent + 2);
  EXPECT_NE(lines[busy_child].find("└─ python -c loader worker"), std::string::npos);
  ui.tree = false;
  lines = Render(Model(), &ui, 140, 40);
  EXPECT_EQ(lines[Find(lines, "  4010 ana")].find("└─"), std::string::npos);
  EXPECT_LT(Find(lines, "  4001 ana"), Find(lines, "  4010 ana"));  // 1.0 core before 0.9
}

TEST(TopFrame, SortOrdersByGpuMemoryCpuRssOrPid) {
  TopUi ui;
  ui.tree = false;
  std::vector<std::string> lines = Render(Model(), &ui, 140, 40);
  EXPECT_LT(Find(lines, "  7000 ana"), Find(lines, "  4001 ana"));  // 69 GB before 28 GB
  EXPECT_NE(lines[Find(lines, "PROCESSES")].find("sort: GPU memory"), std::string::npos);
  ui.sort = TopSort::kPid;
  lines = Render(Model(), &ui, 140, 40);
  EXPECT_LT(Find(lines, "  4001 ana"), Find(lines, "  7000 ana"));
  EXPECT_NE(lines[Find(lines, "PROCESSES")].find("sort: PID"), std::string::npos);
}

TEST(TopFrame, TheFilterKeepsMatchingProcessesAndSaysItself) {
  TopUi ui;
  ui.filter = "SERVE";
  std::vector<std::string> lines = Render(Model(), &ui, 140, 40);
  EXPECT_GE(Find(lines, "  7000 ana"), 0);
  EXPECT_LT(Find(lines, "  4001 ana"), 0);
  EXPECT_NE(lines[Find(lines, "PROCESSES 1")].find("filter: SERVE"), std::string::npos);
  ui.filter = "resnet";  // the job's name matches its processes
  lines = Render(Model(), &ui, 140, 40);
  EXPECT_GE(Find(lines, "  4011 ana"), 0);
  EXPECT_LT(Find(lines, "  7000 ana"), 0);
  ui.filter = "nothing-like-it";
  lines = Render(Model(), &ui, 140, 40);
  EXPECT_GE(Find(lines, "nothing matches the filter"), 0);
  ui.editing_filter = true;
  lines = Render(Model(), &ui, 140, 40);
  EXPECT_EQ(lines.back().find("filter: nothing-like-it_"), 0u);
}

TEST(TopFrame, TheSelectionMovesAndStaysInView) {
  TopModel m = Model();
  for (int i = 0; i < 40; ++i) m.processes.push_back(Process(6000 + i, 1, "idle", 0, 0, 1e6));
  TopUi ui;
  ui.tree = false;
  ui.sort = TopSort::kPid;
  std::vector<TopLine> frame;
  TopHistory history;
  frame = RenderTop(m, history, &ui, 100, 20, true);
  EXPECT_EQ(ui.selected_pid, 4001);
  MoveSelection(m, 30, &ui);
  EXPECT_EQ(ui.selected_pid, 6027);  // 4001, 4010, 4011, then 6000...
  frame = RenderTop(m, history, &ui, 100, 20, true);
  bool shown = false;
  for (const TopLine& line : frame) {
    if (!line.empty() && line[0].style == TopStyle::kSelected) {
      shown = Texts({line})[0].find("   6027 ") == 0;
    }
  }
  EXPECT_TRUE(shown);
  MoveSelection(m, 1000, &ui);
  EXPECT_EQ(ui.selected_pid, 7000);
  MoveSelection(m, -1000, &ui);
  EXPECT_EQ(ui.selected_pid, 4001);
  // The selected process left: the selection goes to the first.
  ui.selected_pid = 99999;
  RenderTop(m, history, &ui, 100, 20, true);
  EXPECT_EQ(ui.selected_pid, 4001);
}

TEST(TopFrame, WithoutUnicodeEveryCharacterIsAscii) {
  TopUi ui;
  std::vector<std::string> lines = Render(Model(), &ui, 140, 40, false);
  for (const std::string& line : lines) {
    EXPECT_TRUE(std::all_of(line.begin(), line.end(), [](char c) {
      return static_cast<unsigned char>(c) < 128;
    })) << line;
  }
}

TEST(TopFrame, AnotherUsersHostileNamesReachTheTerminalVisible) {
  TopModel m = Model();
  m.processes[3].name = "\x1b]0;pwn\a";
  m.processes[3].command = "evil\x1b[2J\r\x9b\nline";
  m.processes[3].user = "x\x1b[31m";
  for (bool unicode : {true, false}) {
    TopUi ui;
    std::vector<std::string> lines = Render(m, &ui, 200, 40, unicode);
    ASSERT_GE(Find(lines, "evil"), 0);
    for (const std::string& line : lines) {
      EXPECT_TRUE(std::none_of(line.begin(), line.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
      })) << line;
    }
    if (unicode) EXPECT_GE(Find(lines, "evil\u241B[2J\u240D\uFFFD\u240Aline"), 0);
  }
}

TEST(TopFrame, OnceShowsEverythingAndSaysWhyThereIsNoGpu) {
  TopModel m = Model();
  m.gpus.clear();
  m.gpu_error = "no NVIDIA driver (libnvidia-ml.so.1 not found)";
  for (int i = 0; i < 80; ++i) m.processes.push_back(Process(6000 + i, 1, "idle", 0, 0, 1e6));
  TopUi ui;
  TopHistory history;
  std::string text = TopText(RenderTop(m, history, &ui, 100, 0, true));
  EXPECT_NE(text.find("GPU  no NVIDIA driver (libnvidia-ml.so.1 not found)"), std::string::npos);
  EXPECT_NE(text.find("  6079 "), std::string::npos);  // every process, no scrolling
  EXPECT_EQ(text.find("↑↓"), std::string::npos);       // no key help in plain text
  EXPECT_EQ(text.find(" \n"), std::string::npos);      // no trailing blanks
}

TEST(TopHistory, KeepsTheLastMinutesPerGpu) {
  TopModel m = Model();
  TopHistory history;
  for (size_t i = 0; i < TopHistory::kLength + 20; ++i) {
    m.gpus[0].sample.util_ratio = i % 2 == 0 ? 0.0 : 1.0;
    history.Add(m);
  }
  EXPECT_EQ(history.cpu().size(), TopHistory::kLength);
  EXPECT_EQ(history.gpu(0).size(), TopHistory::kLength);
  EXPECT_TRUE(history.gpu(5).empty());
}

}  // namespace
}  // namespace tv::top_frame_test

#include "views/summary.h"

#include <gtest/gtest.h>

#include "core/aggregator.h"
#include "store/summary_fixture.h"
#include "views/epoch_line.h"

namespace tv::summary_test {
namespace {

// summary.json as the run writes it before its observers add their parts.
nlohmann::ordered_json Build(const RunOutcome& outcome, const Row& run_row) {
  return RunSummaryJson(SummaryOf(outcome, run_row));
}

// The text printed of the summary `j`.
std::string Text(const nlohmann::ordered_json& j, int width = 0) {
  return FormatSummary(SummaryOfJson(j), width);
}

TEST(Summary, JsonAndTextHoldTheSameNumbers) {
  Aggregator agg;
  Sample s;
  s.job.cpu_cores = 0.5;
  s.job.memory_bytes = 100.0 * (1 << 20);
  s.host.memory_used_bytes = 2.0 * (1 << 30);
  s.host.memory_limit_bytes = 8.0 * (1 << 30);
  agg.Add(s);
  s.job.cpu_cores = 1.5;
  s.job.memory_bytes = 300.0 * (1 << 20);
  agg.Add(s);
  RunOutcome o;
  o.command = {"python", "train.py"};
  o.run_dir = "runs/x";
  o.start_t = 100;
  o.end_t = 112.5;
  o.exit_code = 0;
  auto j = Build(o, agg.Peek(112.5, 12.5));
  EXPECT_EQ(j["duration_s"], 12.5);
  EXPECT_EQ(j["job"]["cpu_cores"]["mean"], 1.0);
  EXPECT_EQ(j["job"]["cpu_cores"]["max"], 1.5);
  EXPECT_EQ(j["job"]["memory_bytes"]["max"], 300.0 * (1 << 20));
  std::string text = Text(j);
  EXPECT_NE(text.find("python train.py — exit code 0 after 12.5 s"), std::string::npos) << text;
  EXPECT_NE(text.find("job mean 1.00 cores, max 1.50"), std::string::npos) << text;
  EXPECT_NE(text.find("job peak 300 MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("host peak 2.00 GiB of 8.00 GiB"), std::string::npos) << text;
}

TEST(Summary, SignalDeathIsSaid) {
  RunOutcome o;
  o.command = {"sh"};
  o.exit_code = 137;
  o.exit_signal = 9;
  auto text = Text(Build(o, Row{}));
  EXPECT_NE(text.find("killed by signal 9 (exit code 137)"), std::string::npos) << text;
}

TEST(Summary, CountsAreIntegersAndCpuIsSaidOfTheCoresAllowed) {
  Aggregator agg;
  Sample s;
  s.job.cpu_cores = 1.7;
  s.job.processes = 3;
  s.host.cpu_limit_cores = 2;
  s.training.steps = 1200;
  s.training.epoch = 4;
  agg.Add(s);
  RunOutcome o;
  o.command = {"python", "train.py"};
  o.exit_code = 0;
  auto j = Build(o, agg.Peek(1, 1));
  EXPECT_TRUE(j["training"]["steps"].is_number_integer()) << j["training"].dump();
  EXPECT_TRUE(j["training"]["epoch"].is_number_integer()) << j["training"].dump();
  EXPECT_TRUE(j["job"]["processes"]["max"].is_number_integer());
  EXPECT_EQ(j["training"]["steps"].dump(), "1200");
  std::string text = Text(j);
  EXPECT_NE(text.find("job mean 1.70 of 2 cores (85%), max 1.70"), std::string::npos) << text;
}

TEST(Summary, SharedGpuShowsTheJobsShareAndThrottlingSaysWhy) {
  Aggregator agg;
  Sample s;
  GpuSample& g = s.gpus.emplace_back();
  g.util_ratio = 0.92;
  g.memory_used_bytes = 30e9;
  g.job_memory_bytes = 4e9;
  g.job_sm_util_ratio = 0.05;
  g.other_memory_bytes = 25e9;
  g.other_processes = 1;
  g.throttle_any_ratio = 1;
  g.throttle_power_ratio = 1;
  g.throttle_thermal_ratio = 0;
  g.throttle_hw_slowdown_ratio = 0;
  agg.Add(s);
  g.throttle_power_ratio = 0;
  g.throttle_thermal_ratio = 1;
  agg.Add(s);
  RunOutcome o;
  o.command = {"python"};
  o.start_t = 0;
  o.end_t = 10;
  auto text = Text(Build(o, agg.Peek(10, 10)));
  EXPECT_NE(text.find("util mean 92%, max 92%; job's SM share mean 5%"), std::string::npos) << text;
  EXPECT_NE(text.find("job's peak 3.73 GiB; other processes' peak 23.3 GiB (1 process)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("throttled 10.0 s (power cap 5.0 s, thermal 5.0 s)"), std::string::npos)
      << text;
}

TEST(Summary, CutEpochIsLeftOutOfTheMeansAndTheExceptionIsSaid) {
  RunOutcome o;
  o.command = {"python", "train.py"};
  o.start_t = 0;
  o.end_t = 40;
  auto j = Build(o, Row{});
  j["epochs"] = nlohmann::ordered_json::array();
  j["epochs"].push_back({{"epoch", 0}, {"duration_s", 10.0}, {"steps", 1700}});
  j["epochs"].push_back(
      {{"epoch", 1}, {"duration_s", 10.0}, {"steps", 1700}, {"logs", {{"loss", 0.2418}}}});
  j["epochs"].push_back({{"epoch", 2}, {"duration_s", 3.0}, {"steps", 100}, {"complete", false}});
  j["exception"] = {{"type", "ValueError"}, {"message", "bad shape"}, {"pid", 42}};
  std::string text = Text(j);
  EXPECT_NE(text.find("died of an exception (ValueError: bad shape) after 40.0 s"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Epochs   2, mean 10.0 s, 170.0 steps/s; 1 cut short (not in the mean)"),
            std::string::npos)
      << text;
}

TEST(Summary, TopProcessesAreNamedForTheirProgramWithTheirRole) {
  RunOutcome o;
  o.command = {"python", "train.py"};
  o.exit_code = 0;
  auto j = Build(o, Row{});
  j["processes"] = {
      {"by_cpu",
       {{{"pid", 412},
         {"role", "main"},
         {"name", "python"},
         {"command", "venv/bin/python -u runs/a/train.py --epochs 3"},
         {"cpu_seconds", 41.0}},
        {{"pid", 413},
         {"role", "DataLoader worker"},
         {"name", "pt_data_worker"},
         {"command", "venv/bin/python -u runs/a/train.py --epochs 3"},
         {"cpu_seconds", 12.3}},
        {{"pid", 414}, {"name", "nvidia-smi"}, {"cpu_seconds", 1.0}}}},
      {"by_memory", {{{"pid", 412}, {"name", "python"}, {"memory_bytes_max", 2.0 * (1 << 30)}}}}};
  j["leaked"] = {{{"pid", 12}, {"name", "sleep"}, {"command", "sleep 30"}}};
  std::string text = Text(j);
  EXPECT_NE(text.find("Top CPU  python train.py (main, pid 412) 41.0 s, python train.py "
                      "(DataLoader worker, pid 413) 12.3 s, nvidia-smi (pid 414) 1.0 s"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Top RAM  python (pid 412) 2.00 GiB"), std::string::npos) << text;
  EXPECT_NE(text.find("still running after the command ended: sleep 30 (pid 12)"),
            std::string::npos)
      << text;
}

TEST(Summary, ShortProgramIsTheExecutableAndAnInterpretersScript) {
  EXPECT_EQ(ShortProgram("venv/bin/python -u runs/a/train.py --lr 1e-3"), "python train.py");
  EXPECT_EQ(ShortProgram("python3.11 -W ignore -X dev train.py"), "python3.11 train.py");
  EXPECT_EQ(ShortProgram("python3 -m torch.distributed.run --nproc-per-node 2 train.py"),
            "python3 -m torch.distributed.run");
  EXPECT_EQ(ShortProgram("python3 -c import time; time.sleep(1)"), "python3");
  EXPECT_EQ(ShortProgram("sh -c sleep 30 & python3 x.py"), "sh");
  EXPECT_EQ(ShortProgram("bash ./run.sh"), "bash run.sh");
  EXPECT_EQ(ShortProgram("/usr/local/bin/torchrun --standalone train.py"), "torchrun");
  EXPECT_EQ(ShortProgram("sleep 30"), "sleep");
  EXPECT_EQ(ShortProgram(""), "");
}

TEST(Summary, LinesWiderThanTheTerminalWrapAtWordsUnderTheLabel) {
  RunOutcome o;
  o.command = {"python", "train.py"};
  o.exit_code = 0;
  o.start_t = 0;
  o.end_t = 60;
  auto j = Build(o, Row{});
  j["gpus"] = {{{"index", 0},
                {"util_ratio", {{"mean", 0.83}, {"max", 1.0}}},
                {"job_sm_util_ratio", {{"mean", 0.4}, {"max", 0.9}}},
                {"memory_used_bytes", {{"mean", 20e9}, {"max", 30e9}}},
                {"energy_joules", 300.0},
                {"temperature_celsius", {{"mean", 70.0}, {"max", 81.0}}}}};
  std::string whole = Text(j);
  std::string gpu_line =
      "  GPU0     util mean 83%, max 100%; job's SM share mean 40%; memory peak "
      "27.9 GiB; energy 300 J; max 81°C\n";
  ASSERT_NE(whole.find(gpu_line), std::string::npos) << whole;  // a pipe: one line
  std::string wrapped = Text(j, 85);
  EXPECT_NE(wrapped.find("  GPU0     util mean 83%, max 100%; job's SM share mean 40%; memory peak "
                         "27.9 GiB;\n"
                         "           energy 300 J; max 81°C\n"),
            std::string::npos)
      << wrapped;
  EXPECT_EQ(Text(j, 0), whole);
  EXPECT_EQ(Text(j, 200), whole);  // nothing wider than 200: unchanged
}

TEST(Summary, WrapSummaryContinuesUnderEachLinesText) {
  std::string text =
      "trainvitals: python train.py --data /datasets/imagenet — exit code 0 after 1.0 s\n"
      "  Findings 1\n"
      "    input-bound [warning]: the GPUs waited for data most of the time\n"
      "      → raise num_workers of the DataLoader\n";
  EXPECT_EQ(WrapSummary(text, 40),
            "trainvitals: python train.py --data\n"
            "             /datasets/imagenet — exit\n"
            "             code 0 after 1.0 s\n"
            "  Findings 1\n"
            "    input-bound [warning]: the GPUs\n"
            "      waited for data most of the time\n"
            "      → raise num_workers of the\n"
            "        DataLoader\n");
  EXPECT_EQ(WrapSummary(text, 0), text);
}

TEST(Summary, ForeignNamesAndCommandsAreShownVisible) {
  RunOutcome o;
  o.command = {"./\x1b[2Jtrain"};
  o.exit_code = 0;
  auto j = Build(o, Row{});
  j["processes"] = {
      {"by_memory", {{{"pid", 10}, {"name", "\x1b]0;pwn\a"}, {"memory_bytes_max", 1e9}}}}};
  j["leaked"] = {{{"pid", 12}, {"name", "x"}, {"command", "evil\r\nline"}}};
  j["run_dir"] = "runs/\x1b[31mx";
  std::string text = Text(j);
  for (char c : text) {
    EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << static_cast<int>(c);
  }
  EXPECT_NE(text.find("Top RAM  \u241B]0;pwn\u2407 (pid 10)"), std::string::npos) << text;
  EXPECT_NE(text.find("evil\u240D\u240Aline (pid 12)"), std::string::npos) << text;
  EXPECT_NE(text.find("./\u241B[2Jtrain"), std::string::npos) << text;
  EXPECT_NE(text.find("runs/\u241B[31mx"), std::string::npos) << text;
}

TEST(EpochLine, ShowsTheLossAndTheJobsShareOfASharedGpu) {
  nlohmann::ordered_json e = {{"epoch", 1},
                              {"duration_s", 10.0},
                              {"steps", 1700},
                              {"steps_per_second", 170.0},
                              {"logs", {{"loss", 0.2418}, {"val_loss", 0.3}}},
                              {"gpus",
                               {{{"index", 0},
                                 {"util_ratio_mean", 0.92},
                                 {"job_sm_util_ratio_mean", 0.05},
                                 {"memory_used_bytes_max", 30e9},
                                 {"job_memory_bytes_max", 4e9},
                                 {"other_memory_bytes_max", 25e9}}}}};
  std::string line = FormatEpochLine(e);
  EXPECT_NE(line.find("1700 steps (170.0/s), loss 0.2418, val_loss 0.3"), std::string::npos)
      << line;
  EXPECT_NE(line.find("GPU0 92% (job SM 5%) mem 27.9 GiB (job 3.73 GiB, others 23.3 GiB)"),
            std::string::npos)
      << line;
}

TEST(EpochLine, SaysTheDataWaitShareOnlyWhenMeasured) {
  nlohmann::ordered_json e = {{"epoch", 2},
                              {"duration_s", 10.0},
                              {"steps", 100},
                              {"steps_per_second", 10.0},
                              {"logs", {{"loss", 0.5}}},
                              {"data_wait_ratio", 0.3412},
                              {"cpu_cores_mean", 1.0}};
  std::string line = FormatEpochLine(e);
  EXPECT_NE(line.find("loss 0.5, data wait 34% | CPU 1.0 cores"), std::string::npos) << line;
  e.erase("data_wait_ratio");  // not measured (Keras, a loop without m.data()): not 0 %
  EXPECT_EQ(FormatEpochLine(e).find("data wait"), std::string::npos);
}

TEST(EpochLine, PhasesSayTheirDataWaitShareWhenMeasured) {
  nlohmann::ordered_json phases = {
      {"train", {{"duration_s", 40.0}, {"share", 0.8}, {"data_wait_ratio", 0.25}}},
      {"eval", {{"duration_s", 10.0}, {"share", 0.2}}}};
  PhaseRecords records;
  ASSERT_TRUE(PhasesFromSummary(nlohmann::ordered_json{{"phases", phases}}, &records).ok());
  EXPECT_EQ(FormatPhases(records), "train 40.0 s (80%, data wait 25%), eval 10.0 s (20%)");
}

}  // namespace
}  // namespace tv::summary_test

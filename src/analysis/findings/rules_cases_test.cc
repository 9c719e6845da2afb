// Findings rules on rows shaped like the workloads of
// tests/integration/test_findings.py, where those runs found a rule wrong: a
// GPU going idle or the odd one out of the job's GPUs is no small batch, a
// lone training process that stalls is named, and a run shorter than
// gpu_unused_s that never used its GPU is gpu-unused at its end.
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "analysis/findings/analyzer.h"

namespace tv::rules_cases_test {
namespace {

constexpr double kT0 = 1000;
constexpr double kRowSeconds = 0.5;
constexpr double kTotal = 80e9;

Thresholds Short() {
  Thresholds th;
  for (auto [key, value] : {std::pair{"warmup_s", 1.0},
                            {"window_s", 4.0},
                            {"open_s", 2.0},
                            {"hold_s", 60.0},
                            {"low_gpu_util_window_s", 8.0},
                            {"gpu_idle_s", 1000.0},
                            {"stalled_s", 3.0}}) {
    EXPECT_EQ(th.Set(key, value), "");
  }
  return th;
}

GpuFrame Gpu(int index, double busy) {
  GpuFrame g;
  g.index = index;
  g.busy = busy;
  g.memory_used_max_bytes = 0.1 * kTotal;
  g.memory_total_bytes = kTotal;
  g.job_memory_bytes = 0.08 * kTotal;
  g.job_processes = 1;
  g.other_processes = 0;
  return g;
}

Frame Row(int i) {
  Frame f;
  f.t = kT0 + i * kRowSeconds;
  f.elapsed_s = i * kRowSeconds;
  f.job_cpu_util_ratio = 0.1;
  f.job_processes = 1;
  return f;
}

std::vector<std::string> Ids(const Analyzer& a) {
  std::vector<std::string> ids;
  for (const auto& f : FindingsJson(a.Findings())) ids.push_back(f["id"].get<std::string>());
  return ids;
}

TEST(FindingsRules, AGpuGoingIdleIsNoSmallBatch) {
  Analyzer a(Short(), kRowSeconds);
  std::vector<Event> events;
  for (int i = 0; i < 60; ++i) {  // 90 % busy for 10 s, then idle for 20 s
    Frame f = Row(i);
    f.gpus = {Gpu(0, i * kRowSeconds < 10 ? 0.9 : 0)};
    a.OnFrame(f, &events);
  }
  for (const auto& id : Ids(a))
    EXPECT_NE(id, "batch-too-small") << FindingsJson(a.Findings()).dump();
}

TEST(FindingsRules, AGpuSteadilyModeratelyBusyIsASmallBatch) {
  Analyzer a(Short(), kRowSeconds);
  std::vector<Event> events;
  for (int i = 0; i < 40; ++i) {
    Frame f = Row(i);
    f.gpus = {Gpu(0, 0.4)};
    a.OnFrame(f, &events);
  }
  EXPECT_EQ(Ids(a), std::vector<std::string>{"batch-too-small"})
      << FindingsJson(a.Findings()).dump();
}

TEST(FindingsRules, TheOddGpuOutOfFourIsImbalancedNotASmallBatch) {
  Analyzer a(Short(), kRowSeconds);
  std::vector<Event> events;
  for (int i = 0; i < 60; ++i) {
    Frame f = Row(i);
    for (int g = 0; g < 4; ++g) f.gpus.push_back(Gpu(g, g == 2 ? 0.3 : 0.9));
    a.OnFrame(f, &events);
  }
  auto findings = FindingsJson(a.Findings());
  ASSERT_EQ(Ids(a), std::vector<std::string>{"gpu-imbalance"}) << findings.dump();
  EXPECT_EQ(findings[0]["subject"], (nlohmann::ordered_json{{"gpu", 2}}));
}

TEST(FindingsRules, ALoneTrainingProcessThatStallsIsNamed) {
  Analyzer a(Short(), kRowSeconds);
  std::vector<Event> events;
  a.OnMark(Mark{.type = EventType::kClientStart, .t = kT0, .pid = 4321, .framework = "torch"},
           &events);
  for (int i = 1; i < 40; ++i) {  // 10 steps a row for 8 s, then none
    Frame f = Row(i);
    f.steps = std::min(i, 16) * 10.0;
    a.OnFrame(f, &events);
  }
  auto findings = FindingsJson(a.Findings());
  ASSERT_EQ(Ids(a), std::vector<std::string>{"stalled"}) << findings.dump();
  EXPECT_EQ(findings[0]["subject"], (nlohmann::ordered_json{{"pid", 4321}}));
  EXPECT_NE(findings[0]["message"].get<std::string>().find("in process 4321"), std::string::npos);
}

TEST(FindingsRules, ARunShorterThanGpuUnusedSThatNeverUsedItsGpuIsGpuUnusedAtTheEnd) {
  Thresholds th = Short();
  ASSERT_EQ(th.Set("gpu_unused_s", 100), "");
  for (double busy : {0.0, 0.9}) {
    Analyzer a(th, kRowSeconds);
    std::vector<Event> events;
    int rows = 20;
    for (int i = 0; i < rows; ++i) {
      Frame f = Row(i);
      f.gpus = {Gpu(0, busy), Gpu(1, 0)};
      f.gpus[1].job_memory_bytes = 0;  // not the job's: not judged
      a.OnFrame(f, &events);
    }
    EXPECT_TRUE(events.empty());  // nothing while it ran: shorter than gpu_unused_s
    a.Finish(kT0 + rows * kRowSeconds, &events);
    auto findings = FindingsJson(a.Findings());
    if (busy > 0) {
      EXPECT_EQ(findings.size(), 0u) << findings.dump();
      continue;
    }
    ASSERT_EQ(Ids(a), std::vector<std::string>{"gpu-unused"}) << findings.dump();
    EXPECT_EQ(findings[0]["subject"], (nlohmann::ordered_json{{"gpu", 0}}));
    EXPECT_EQ(findings[0]["opened_t"].get<double>(),
              kT0 + (rows - 1) * kRowSeconds);  // the last row
    EXPECT_EQ(findings[0]["evidence"]["seconds_held"].get<double>(), (rows - 1) * kRowSeconds);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].type, EventType::kFindingOpen);
  }
}

}  // namespace
}  // namespace tv::rules_cases_test

// The rules on one GPU's own figures (gpu_device.h), each on a GPU that has the
// problem (it opens, with the figures that show it) and on a healthy one
// beside it (nothing), through the analyzer as a run feeds them.
#include "analysis/findings/gpu_device.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "analysis/findings/analyzer.h"

namespace tv::gpu_device_test {
namespace {

constexpr double kRowSeconds = 0.5;
constexpr double kTotal = 80e9;

Thresholds Short() {
  Thresholds th;
  for (auto [key, value] :
       {std::pair{"warmup_s", 1.0}, {"window_s", 4.0}, {"open_s", 2.0}, {"hold_s", 60.0}}) {
    EXPECT_EQ(th.Set(key, value), "");
  }
  return th;
}

// GPU 1 is healthy: 90 % busy, a tenth of its memory, alone, never throttled.
GpuFrame Healthy(int index) {
  GpuFrame g;
  g.index = index;
  g.busy = 0.9;
  g.memory_used_max_bytes = 0.1 * kTotal;
  g.memory_total_bytes = kTotal;
  g.job_memory_bytes = 0.1 * kTotal;
  g.job_processes = 1;
  g.other_processes = 0;
  g.throttle_any_ratio = 0;
  return g;
}

// 30 s of rows with GPU 0 made by `sick` from a healthy one, and GPU 1 healthy.
nlohmann::ordered_json Judge(const std::function<void(GpuFrame*)>& sick) {
  Analyzer a(Short(), kRowSeconds);
  std::vector<Event> events;
  for (int i = 0; i < 60; ++i) {
    Frame f;
    f.t = 1000 + i * kRowSeconds;
    f.elapsed_s = i * kRowSeconds;
    f.job_cpu_util_ratio = 0.5;
    f.job_processes = 1;
    f.gpus = {Healthy(0), Healthy(1)};
    sick(&f.gpus[0]);
    a.OnFrame(f, &events);
  }
  return FindingsJson(a.Findings());
}

TEST(GpuDeviceRules, NearlyFullMemoryOpensOnTheAllocatorsFigureWhereTheFrameworkSendsIt) {
  nlohmann::ordered_json found = Judge([](GpuFrame* g) {
    g->memory_used_max_bytes = 0.99 * kTotal;  // reserved up front: not what it needs
    g->allocator_allocated_max_bytes = 0.97 * kTotal;
  });
  ASSERT_EQ(found.size(), 1u) << found.dump();
  EXPECT_EQ(found[0]["id"], "gpu-memory-near-full");
  EXPECT_EQ(found[0]["subject"], (nlohmann::ordered_json{{"gpu", 0}}));
  EXPECT_EQ(found[0]["evidence"]["memory_used_bytes"], 0.97 * kTotal);
  EXPECT_EQ(found[0]["evidence"]["ratio"], 0.97);
  EXPECT_EQ(found[0]["evidence"]["from"], "allocator");
  // A framework that reserves nearly all but needs little has room.
  EXPECT_EQ(Judge([](GpuFrame* g) {
              g->memory_used_max_bytes = 0.99 * kTotal;
              g->allocator_allocated_max_bytes = 0.3 * kTotal;
            }).size(),
            0u);
}

TEST(GpuDeviceRules, AnotherJobsProcessOnTheGpuIsSharedAndItsMemoryShareSetsTheSeverity) {
  nlohmann::ordered_json found = Judge([](GpuFrame* g) {
    g->other_processes = 2;
    g->other_memory_bytes = 0.25 * kTotal;
  });
  ASSERT_EQ(found.size(), 1u) << found.dump();
  EXPECT_EQ(found[0]["id"], "shared-gpu");
  EXPECT_EQ(found[0]["severity"], "warning");
  EXPECT_EQ(found[0]["evidence"]["other_processes"], 2);
  EXPECT_EQ(found[0]["evidence"]["other_memory_share"], 0.25);
  found = Judge([](GpuFrame* g) {
    g->other_processes = 1;
    g->other_memory_bytes = 0.01 * kTotal;
  });
  ASSERT_EQ(found.size(), 1u) << found.dump();
  EXPECT_EQ(found[0]["severity"], "info");
  // The job's own GPU memory elsewhere is no sharing: nothing without others.
  EXPECT_EQ(Judge([](GpuFrame*) {}).size(), 0u);
}

TEST(GpuDeviceRules, ClocksHeldDownWhileWorkingAreThrottledButNotWhileIdle) {
  nlohmann::ordered_json found = Judge([](GpuFrame* g) { g->throttle_any_ratio = 0.6; });
  ASSERT_EQ(found.size(), 1u) << found.dump();
  EXPECT_EQ(found[0]["id"], "throttled");
  EXPECT_EQ(found[0]["subject"], (nlohmann::ordered_json{{"gpu", 0}}));
  EXPECT_EQ(found[0]["evidence"]["throttle_any_ratio"], 0.6);
  EXPECT_EQ(found[0]["evidence"]["busy_ratio"], 0.9);
  // Under the share, or with the clocks down only while it does nothing.
  EXPECT_EQ(Judge([](GpuFrame* g) { g->throttle_any_ratio = 0.1; }).size(), 0u);
  for (const auto& f : Judge([](GpuFrame* g) {
         g->throttle_any_ratio = 1;
         g->busy = 0;
       })) {
    EXPECT_NE(f["id"], "throttled") << f.dump();
  }
}

}  // namespace
}  // namespace tv::gpu_device_test

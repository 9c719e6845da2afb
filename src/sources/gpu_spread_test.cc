// The expensive NVML calls take turns across ticks; GPM values from the first
// row on, and only said readable when they come out.
#include <gtest/gtest.h>

#include <fstream>

#include "sources/fake_nvml_fixture.h"
#include "sources/gpu_probe.h"

namespace tv {
namespace {

#ifdef FAKE_NVML_PATH

// The scheduled expensive calls: energy counter (about 4 ms on an H200) and
// per-process utilisation (about 2.4 ms).
constexpr const char* kScheduled[] = {"nvmlDeviceGetTotalEnergyConsumption",
                                      "nvmlDeviceGetProcessUtilization"};
constexpr const char* kBusy = R"({"devices": [{"uuid": "GPU-busy",
  "processes": [{"pid": 4242, "memory_bytes": 1e9, "sm_util": 70}]}]})";

class GpuSpread : public FakeNvmlTest {
 protected:
  struct Counts {
    long scheduled = 0;  // how many of the two scheduled expensive reads the tick made
    long energy = 0, process_util = 0, util_buffer = 0;
  };
  Counts TickCounting(double t, bool row) {
    long before[2] = {Calls(kScheduled[0]), Calls(kScheduled[1])};
    long util_before = Calls("nvmlDeviceGetSamples(GPU_UTILIZATION)");
    Tick(t, row);
    Counts c;
    c.energy = Calls(kScheduled[0]) - before[0];
    c.process_util = Calls(kScheduled[1]) - before[1];
    c.util_buffer = Calls("nvmlDeviceGetSamples(GPU_UTILIZATION)") - util_before;
    // A read may be two calls (the size, then the samples): ticks with any count.
    c.scheduled = (c.energy > 0) + (c.process_util > 0);
    return c;
  }
};

TEST_F(GpuSpread, ExpensiveCallsFallOnDifferentPlainTicksAt10Hz) {
  Open(kBusy);
  ASSERT_NE(source_, nullptr);
  long energy = 0, process_util = 0;
  for (int k = 0; k < 300; ++k) {  // 30 s at 10 Hz, a row every 10 ticks
    bool row = (k + 1) % 10 == 0;
    Counts c = TickCounting(k * 0.1, row);
    EXPECT_LE(c.scheduled, 1) << "tick " << k;
    if (k > 0 && row) {
      EXPECT_EQ(c.scheduled, 0) << "row tick " << k;
    }
    energy += c.energy > 0;
    process_util += c.process_util > 0;
  }
  EXPECT_GE(energy, 3);  // at the start, then every 10 s
  EXPECT_LE(energy, 4);
  EXPECT_GE(process_util, 6);  // every 5 s, after a priming read
  EXPECT_LE(process_util, 8);
}

TEST_F(GpuSpread, EveryTickARowStillSpreadsThem) {
  Open(kBusy);
  ASSERT_NE(source_, nullptr);
  long energy = 0, process_util = 0;
  for (int k = 0; k < 40; ++k) {  // 1 Hz, each tick a row: the utilisation buffer each tick
    Counts c = TickCounting(k * 1.0, true);
    EXPECT_LE(c.scheduled, 1) << "tick " << k;
    if (k > 0) {
      EXPECT_EQ(c.util_buffer, 1) << "tick " << k;
    }
    energy += c.energy > 0;
    process_util += c.process_util > 0;
  }
  EXPECT_GE(energy, 4);
  EXPECT_GE(process_util, 7);
}

using GpuGpmStart = FakeNvmlTest;

TEST_F(GpuGpmStart, FirstRowHasGpmValues) {
  Open(R"({"devices": [{"gpm": {"2": 80, "5": 30}}]})");
  ASSERT_NE(source_, nullptr);
  Row first = RowAt(0);
  ASSERT_EQ(first.gpus.size(), 1u);
  std::optional<Stat> sm = Get(first.gpus[0], "sm_active_ratio");
  ASSERT_TRUE(sm.has_value());
  EXPECT_NEAR(sm->mean, 0.8, 1e-9);
  EXPECT_NEAR(Get(RowAt(1).gpus[0], "tensor_active_ratio")->mean, 0.3, 1e-9);
}

// ProbeGpus on the fake with its clock running (an earlier test may have frozen it).
nlohmann::json ProbeOnRunningClock(const std::string& scenario) {
  std::string path = ::testing::TempDir() + "gpm_probe_" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << scenario;
  setenv("FAKE_NVML_SCENARIO", path.c_str(), 1);
  void* lib = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(lib, nullptr);
  if (lib == nullptr) return {};
  reinterpret_cast<void (*)(double)>(dlsym(lib, "fakeNvmlSetTime"))(-1);
  GpuSourceOptions options;
  options.nvml_library = FAKE_NVML_PATH;
  nlohmann::json j = ProbeGpus(options, 0.12);
  dlclose(lib);
  unsetenv("FAKE_NVML_SCENARIO");
  return j;
}

TEST(GpuGpmProbe, MetricsThatDoNotComeOutAreNotCalledReadable) {
  nlohmann::json j = ProbeOnRunningClock(R"({"devices": [{"gpm": {"2": 80},
                               "errors": {"nvmlGpmMetricsGet": "UNKNOWN"}}]})");
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["supports"]["gpm"], "error");
  EXPECT_FALSE(j["gpus"][0]["values"].contains("sm_active_ratio"));
}

TEST(GpuGpmProbe, ReadableGpmGivesValues) {
  nlohmann::json j = ProbeOnRunningClock(R"({"devices": [{"gpm": {"2": 80}}]})");
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["supports"]["gpm"], "ok");
  EXPECT_NEAR(j["gpus"][0]["values"]["sm_active_ratio"].get<double>(), 0.8, 1e-6);
}

// The compute-process list (about 0.23 ms a call on an H200, ticks apart) is
// read on row ticks and when the device's used memory moved, and its figures
// are in every sample.
TEST_F(GpuSpread, ProcessListOnRowsAndWhenMemoryMoves) {
  Open(R"({"devices": [{"uuid": "GPU-steady",
    "series": {"memory_used_bytes": {"step": [[0, 2e9], [1.25, 3e9]]}},
    "processes": [{"pid": 4242, "memory_bytes": 1e9}]}]})");
  ASSERT_NE(source_, nullptr);
  const char* list = "nvmlDeviceGetComputeRunningProcesses_v3";
  std::vector<int> read_at;
  for (int k = 0; k < 30; ++k) {  // 3 s at 10 Hz, a row every 10 ticks
    long before = Calls(list);
    Sample s = Tick(k * 0.1, (k + 1) % 10 == 0);
    if (Calls(list) > before) read_at.push_back(k);
    ASSERT_EQ(s.gpus.size(), 1u);
    EXPECT_TRUE(s.gpus[0].other_memory_bytes.has_value()) << "tick " << k;
  }
  // The first tick, the memory's move (1.3 s), and each row tick.
  EXPECT_EQ(read_at, (std::vector<int>{0, 9, 13, 19, 29}));
}

#endif  // FAKE_NVML_PATH

}  // namespace
}  // namespace tv

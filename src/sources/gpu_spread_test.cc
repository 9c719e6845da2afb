// The expensive NVML calls take turns across ticks; GPM values from the first
// row on, and only said readable when they come out; the driver opened off the
// caller's path (DeferredGpuSource).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "sources/fake_nvml_fixture.h"
#include "sources/gpu_deferred.h"
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

// The driver takes 0.4 s to initialise.
class DeferredGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "fake_nvml_slow_" + std::to_string(getpid()) + ".json";
    std::ofstream(path_) << R"({"init_delay_s": 0.4, "devices": [{"uuid": "GPU-slow"}]})";
    setenv("FAKE_NVML_SCENARIO", path_.c_str(), 1);
    lib_ = dlopen(FAKE_NVML_PATH, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(lib_, nullptr);
    init_count_ = reinterpret_cast<int (*)()>(dlsym(lib_, "fakeNvmlInitCount"));
    ASSERT_NE(init_count_, nullptr);
    options_.nvml_library = FAKE_NVML_PATH;
  }
  void TearDown() override {
    // An abandoned opening shuts the driver down on its own thread: wait for it,
    // so that the next test finds the fake idle.
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (init_count_() > 0 && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(init_count_(), 0);
    dlclose(lib_);
    unsetenv("FAKE_NVML_SCENARIO");
  }
  static double Since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }
  std::string path_;
  void* lib_ = nullptr;
  int (*init_count_)() = nullptr;
  GpuSourceOptions options_;
};

TEST_F(DeferredGpu, OpensOffThePathAndReportsWhenReady) {
  auto start = std::chrono::steady_clock::now();
  DeferredGpuSource source(options_);
  EXPECT_LT(Since(start), 0.2);  // the 0.4 s initialisation is not waited for
  int ready_calls = 0;
  nlohmann::json info;
  source.set_on_ready([&](const nlohmann::json& j) {
    ++ready_calls;
    info = j;
  });
  std::vector<Notice> notices;
  Sample early;
  tv::Tick tick;
  source.Read(tick, &early, &notices);
  EXPECT_TRUE(early.gpus.empty());  // rows before the driver is up lack GPUs
  EXPECT_EQ(ready_calls, 0);
  ASSERT_TRUE(source.WaitReady(20));
  EXPECT_GE(Since(start), 0.35);
  Sample later;
  tick.mono_s = 1;
  source.Read(tick, &later, &notices);
  ASSERT_EQ(later.gpus.size(), 1u);
  EXPECT_TRUE(later.gpus[0].memory_used_bytes.has_value());
  source.Read(tick, &later, &notices);
  EXPECT_EQ(ready_calls, 1);
  ASSERT_EQ(info["gpus"].size(), 1u);
  EXPECT_EQ(info["gpus"][0]["index"], 0);
  EXPECT_EQ(source.static_info()["gpus"].size(), 1u);
  EXPECT_TRUE(notices.empty());
}

TEST_F(DeferredGpu, DestroyedWhileOpeningDoesNotWait) {
  auto start = std::chrono::steady_clock::now();
  { DeferredGpuSource source(options_); }
  EXPECT_LT(Since(start), 0.2);
}

TEST(DeferredGpuNoDriver, SaysWhyOnceAtTheFirstTickAfter) {
  GpuSourceOptions options;
  options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  DeferredGpuSource source(options);
  ASSERT_TRUE(source.WaitReady(20));
  std::vector<Notice> notices;
  Sample s;
  source.Read(tv::Tick{}, &s, &notices);
  source.Read(tv::Tick{}, &s, &notices);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].source, "nvml");
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_TRUE(source.static_info().is_null());
}

#endif  // FAKE_NVML_PATH

}  // namespace
}  // namespace tv

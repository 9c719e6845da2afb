#include "sources/gpu_source.h"

#include <gtest/gtest.h>

#include "sources/fake_nvml_fixture.h"

namespace tv::gpu_source_test {
namespace {

TEST(GpuSource, NoLibraryIsOneClearNotice) {
  GpuSourceOptions options;
  options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  std::vector<Notice> notices;
  EXPECT_EQ(GpuSource::Create(options, &notices), nullptr);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].message,
            "no NVIDIA driver library (/nonexistent/libnvidia-ml.so.1 not found): GPU metrics "
            "off, host metrics go on");
}

TEST(GpuSource, IdHashIsShortAndStable) {
  EXPECT_EQ(GpuIdHash("GPU-abc"), GpuIdHash("GPU-abc"));
  EXPECT_NE(GpuIdHash("GPU-abc"), GpuIdHash("GPU-abd"));
  EXPECT_EQ(GpuIdHash("GPU-abc").size(), 16u);
}

#ifdef FAKE_NVML_PATH

constexpr const char* kTwoGpus = R"({"devices": [
  {"uuid": "GPU-aaaa-0", "series": {"util_gpu": 40, "memory_used_bytes": 2e9,
   "temperature_c": 55, "power_mw": 250000, "sm_clock_mhz": 1500, "pcie_tx_kbps": 2}},
  {"uuid": "GPU-bbbb-1", "series": {"util_gpu": 90}}]})";

using GpuSourceFake = FakeNvmlTest;

TEST_F(GpuSourceFake, ReadsTwoGpusInSiUnits) {
  Open(kTwoGpus);
  ASSERT_NE(source_, nullptr);
  Sample s = Tick(0.1, true);
  ASSERT_EQ(s.gpus.size(), 2u);
  const GpuSample& g = s.gpus[0];
  EXPECT_EQ(g.index, 0);
  EXPECT_DOUBLE_EQ(*g.util_ratio, 0.4);
  EXPECT_DOUBLE_EQ(*g.memory_used_bytes, 2e9);
  EXPECT_DOUBLE_EQ(*g.memory_total_bytes, 85899345920.0);
  EXPECT_TRUE(g.memory_reserved_bytes.has_value());
  EXPECT_DOUBLE_EQ(*g.temperature_celsius, 55);
  EXPECT_DOUBLE_EQ(*g.power_watts, 250);
  EXPECT_DOUBLE_EQ(*g.power_limit_watts, 700);
  EXPECT_DOUBLE_EQ(*g.sm_clock_hertz, 1.5e9);
  EXPECT_DOUBLE_EQ(*g.pcie_tx_bytes_per_second, 2048);
  EXPECT_FALSE(g.fan_ratio.has_value());  // passively cooled: not supported, absent
  EXPECT_DOUBLE_EQ(*s.gpus[1].util_ratio, 0.9);
  EXPECT_EQ(s.gpus[1].index, 1);

  EXPECT_EQ(source_->driver().driver_version, "550.54.15");
  const std::vector<GpuInfo>& gpus = source_->gpus();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].energy_source, "counter");
  EXPECT_EQ(gpus[0].compute_capability, "9.0");
  EXPECT_EQ(gpus[0].id, GpuIdHash("GPU-aaaa-0"));
  EXPECT_TRUE(gpus[0].uuid.empty());
}

TEST_F(GpuSourceFake, CachesHandlesAndTriesUnsupportedMetricsOnce) {
  Open(kTwoGpus);
  for (int i = 0; i < 20; ++i) Tick(i * 0.1, true);
  EXPECT_EQ(Calls("nvmlDeviceGetHandleByIndex_v2"), 2);
  EXPECT_EQ(Calls("nvmlDeviceGetFanSpeed"), 2);  // once per GPU
}

TEST_F(GpuSourceFake, EnergyCountsFromTheStartOfMonitoring) {
  Open(R"({"devices": [{"series": {"power_mw": 200000}}]})");
  long calls_at_open = Calls("nvmlDeviceGetTotalEnergyConsumption");
  // The first tick is the start, row or not: 0 J there, not at the first row.
  EXPECT_NEAR(*Tick(0.5).gpus[0].energy_joules, 0, 1e-9);
  // Between counter reads, power is added to the last reading...
  EXPECT_NEAR(*Tick(1.0, true).gpus[0].energy_joules, 100, 1e-6);
  EXPECT_NEAR(*Tick(2.0).gpus[0].energy_joules, 300, 1e-6);
  EXPECT_NEAR(*Tick(3.0, true).gpus[0].energy_joules, 500, 1e-6);
  // ...and every 10 s the counter itself (on a tick that closes no row): 200 W
  // over the 10.5 s since the first read, not the driver's count since it loaded.
  EXPECT_NEAR(*Tick(11.0).gpus[0].energy_joules, 2100, 1);
  // (the per-process read, due longer, may take that tick: the counter the next)
  EXPECT_NEAR(*Tick(11.1).gpus[0].energy_joules, 2120, 1);
  EXPECT_EQ(Calls("nvmlDeviceGetTotalEnergyConsumption") - calls_at_open, 2);
}

TEST_F(GpuSourceFake, NarrowsToCudaVisibleDevicesNumbering) {
  options_.cuda_visible_devices = "GPU-bbbb";
  Open(kTwoGpus);
  Sample s = Tick(0.1);
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].index, 0);
  EXPECT_EQ(s.gpus[0].physical_index, 1);
}

TEST_F(GpuSourceFake, OptionWatchesOnlyChosenGpus) {
  options_.gpus = {1};
  Open(kTwoGpus);
  Sample s = Tick(0.1);
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].index, 1);
}

TEST_F(GpuSourceFake, ThrottleReasonsBecomeFractionsOfTheRow) {
  std::ifstream in(std::string(FAKE_NVML_SCENARIOS_DIR) + "/throttle.json");
  Open(std::string(std::istreambuf_iterator<char>(in), {}));
  Row row = RowAt(0);
  ASSERT_EQ(row.gpus.size(), 1u);
  EXPECT_NEAR(Get(row.gpus[0], "throttle_power_ratio")->mean, 0.5, 1e-9);
  EXPECT_NEAR(Get(row.gpus[0], "throttle_thermal_ratio")->mean, 0.2, 1e-9);
  EXPECT_NEAR(Get(row.gpus[0], "throttle_any_ratio")->mean, 0.5, 1e-9);
  EXPECT_NEAR(Get(row.gpus[0], "throttle_hw_slowdown_ratio")->mean, 0.0, 1e-9);
}

TEST_F(GpuSourceFake, DriverBufferCatchesBurstBetweenSparseTicks) {
  Open(R"({"devices": [{"util_sample_period_s": 0.1,
    "series": {"util_gpu": {"step": [[0, 10], [1.3, 100], [1.45, 10]]}}}]})");
  Aggregator agg;  // sampling at 1 Hz: the polls at 1 s and 2 s both see 10 %
  agg.Add(Tick(0.0, true));
  agg.Add(Tick(1.0, true));
  agg.Add(Tick(2.0, true));
  auto util = Get(agg.Take(0, 2).gpus[0], "util_ratio");
  EXPECT_DOUBLE_EQ(util->max, 1.0);  // the driver saw the burst
  EXPECT_LT(util->mean, 0.5);
}

TEST_F(GpuSourceFake, DenseTicksSkipTheCostlyUtilisationBuffer) {
  Open(R"({"devices": [{}]})");
  RowAt(0);
  long after_first_row = Calls("nvmlDeviceGetSamples");
  RowAt(1);
  RowAt(2);
  EXPECT_EQ(Calls("nvmlDeviceGetSamples") - after_first_row, 2);  // the power buffer, once a row
}

TEST_F(GpuSourceFake, LostGpuStopsBeingReadAndSaysSoOnce) {
  Open(R"({"devices": [{"uuid": "GPU-a"}, {"uuid": "GPU-b", "lost_from_s": 0.5}]})");
  EXPECT_EQ(Tick(0.4).gpus.size(), 2u);
  notices_.clear();
  EXPECT_EQ(Tick(0.5).gpus.size(), 1u);
  ASSERT_EQ(notices_.size(), 1u);
  EXPECT_EQ(notices_[0].source, "gpu_lost");
  EXPECT_NE(notices_[0].message.find("GPU 1"), std::string::npos);
  Sample later = Tick(0.6, true);
  ASSERT_EQ(later.gpus.size(), 1u);
  EXPECT_EQ(later.gpus[0].index, 0);
  EXPECT_EQ(notices_.size(), 1u);
}

TEST_F(GpuSourceFake, FailingMetricIsAbsentNotZero) {
  Open(R"({"devices": [{"errors": {"nvmlDeviceGetTemperature": "UNKNOWN"}}]})");
  Sample s = Tick(0.1);
  EXPECT_FALSE(s.gpus[0].temperature_celsius.has_value());
  EXPECT_TRUE(s.gpus[0].power_watts.has_value());
}

TEST_F(GpuSourceFake, NoPermissionSaysWhatIsMissing) {
  Open(R"({"devices": [{"errors": {"nvmlDeviceGetTotalEccErrors": "NO_PERMISSION"}}]})");
  Tick(0.1, true);
  Tick(1.1, true);
  ASSERT_EQ(notices_.size(), 1u);
  EXPECT_NE(notices_[0].message.find("ecc"), std::string::npos);
  EXPECT_NE(notices_[0].message.find("NO_PERMISSION"), std::string::npos);
}

TEST_F(GpuSourceFake, InitWithoutPermissionExplains) {
  Open(R"({"init_error": "NO_PERMISSION", "devices": [{}]})");
  EXPECT_EQ(source_, nullptr);
  ASSERT_EQ(notices_.size(), 1u);
  EXPECT_NE(notices_[0].message.find("/dev/nvidia"), std::string::npos);
}

TEST_F(GpuSourceFake, OldDriverIntegratesPowerAndUsesOlderCalls) {
  Open(R"({"devices": [{"series": {"power_mw": 100000},
    "processes": [{"pid": 4242, "memory_bytes": 1e9}]}]})",
       FAKE_NVML_OLD_PATH);
  ASSERT_NE(source_, nullptr);
  EXPECT_EQ(source_->gpus()[0].energy_source, "integrated");
  job_pids_ = {4242};
  Tick(1.0);
  Sample s = Tick(3.0);
  EXPECT_NEAR(*s.gpus[0].energy_joules, 200, 1e-6);  // 100 W over 2 s
  EXPECT_DOUBLE_EQ(*s.gpus[0].job_memory_bytes, 1e9);
  EXPECT_FALSE(s.gpus[0].memory_reserved_bytes.has_value());  // no MemoryInfo_v2
  EXPECT_GT(Calls("nvmlDeviceGetComputeRunningProcesses_v2"), 0);
  EXPECT_TRUE(s.gpus[0].throttle_any_ratio.has_value());  // ...ThrottleReasons fallback
}

TEST_F(GpuSourceFake, FallsBackWhenV3AnswersFunctionNotFound) {
  Open(R"({"devices": [{"errors": {"nvmlDeviceGetComputeRunningProcesses_v3":
    "FUNCTION_NOT_FOUND"}, "processes": [{"pid": 77, "memory_bytes": 5e8}]}]})");
  job_pids_ = {77};
  Sample s = Tick(0.1);
  EXPECT_DOUBLE_EQ(*s.gpus[0].job_memory_bytes, 5e8);
  EXPECT_GT(Calls("nvmlDeviceGetComputeRunningProcesses_v2"), 0);
}

#endif  // FAKE_NVML_PATH

}  // namespace
}  // namespace tv::gpu_source_test

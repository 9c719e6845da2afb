// GpuSource over the fake driver: processes, MIG, GPM, probe.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sources/fake_nvml_fixture.h"
#include "sources/gpu_probe.h"

namespace tv::gpu_source_more_test {
namespace {

#ifdef FAKE_NVML_PATH

using GpuJobShare = FakeNvmlTest;

TEST_F(GpuJobShare, LeakShowsAsGrowingJobMemoryOfARealChild) {
  pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  std::ifstream in(std::string(FAKE_NVML_SCENARIOS_DIR) + "/leak.json");
  Open(std::string(std::istreambuf_iterator<char>(in), {}));
  job_pids_ = {child};
  Sample early = Tick(1.0, true);
  Sample late = Tick(31.0, true);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_EQ(early.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(*early.gpus[0].job_memory_bytes, 2.5e9);
  EXPECT_DOUBLE_EQ(*late.gpus[0].job_memory_bytes, 32.5e9);
  EXPECT_DOUBLE_EQ(*late.gpus[0].job_processes, 1);
  EXPECT_DOUBLE_EQ(*late.gpus[0].other_memory_bytes, 5e8);  // pid 1, another user's
  EXPECT_DOUBLE_EQ(*late.gpus[0].other_processes, 1);
  EXPECT_NEAR(*late.gpus[0].job_sm_util_ratio, 0.9, 1e-9);
}

TEST_F(GpuJobShare, MapsHostPidsThroughNsPid) {
  MemEnv env;
  env.Set("/proc/90001/status", "Name:\tpython\nNSpid:\t90001\t12\n");
  options_.env = &env;
  Open(R"({"devices": [{"processes": [{"pid": 90001, "memory_bytes": 3e9, "sm_util": 40},
                                      {"pid": 90002, "memory_bytes": 1e9}]}]})");
  job_pids_ = {12};  // the job as our PID namespace numbers it
  Tick(0.0, true);
  Sample s = Tick(5.0, true);  // per-process SM use is read every 5 s
  EXPECT_DOUBLE_EQ(*s.gpus[0].job_memory_bytes, 3e9);
  EXPECT_DOUBLE_EQ(*s.gpus[0].other_memory_bytes, 1e9);
  EXPECT_NEAR(*s.gpus[0].job_sm_util_ratio, 0.4, 1e-9);
}

TEST_F(GpuJobShare, KeepsTheTopEightProcessesByMemoryWithNamesAndSm) {
  MemEnv env;
  env.Set("/proc/90010/status", "Name:\tpython\nNSpid:\t90010\t12\n");
  env.Set("/proc/90010/comm", "python\n");
  env.Set("/proc/90003/comm", "other-job\n");
  options_.env = &env;
  std::string procs;
  for (int k : {3, 10, 1, 7, 5, 2, 9, 4, 8, 6}) {
    procs += fmt::format("{}{{\"pid\": {}, \"memory_bytes\": {}e9{}}}", procs.empty() ? "" : ",",
                         90000 + k, k, k == 10 ? ", \"sm_util\": 60" : "");
  }
  Open(R"({"devices": [{"processes": [)" + procs + "]}]}");
  job_pids_ = {12};
  Tick(0.0, true);
  Sample s = Tick(5.0, true);  // reads per-process SM
  const GpuProcessList& list = s.gpus[0].processes;
  EXPECT_TRUE(list.known);
  ASSERT_EQ(list.size, 8u);
  EXPECT_EQ(list.items[0].pid, 90010);
  EXPECT_EQ(list.items[0].name, "python");
  EXPECT_TRUE(list.items[0].is_job);
  EXPECT_DOUBLE_EQ(*list.items[0].memory_bytes, 10e9);
  EXPECT_NEAR(*list.items[0].sm_util_ratio, 0.6, 1e-9);
  EXPECT_EQ(list.items[7].pid, 90003);
  EXPECT_EQ(list.items[7].name, "other-job");
  EXPECT_FALSE(list.items[7].is_job);
  EXPECT_DOUBLE_EQ(*list.items[7].sm_util_ratio, 0.0);  // ran no kernels
  EXPECT_EQ(list.items[1].name, "");                    // no /proc entry: unknown
  EXPECT_DOUBLE_EQ(*s.gpus[0].other_processes, 9);      // the counts still see all ten

  Sample between = Tick(6.0);  // SM is not re-read: the last read carries over
  EXPECT_NEAR(*between.gpus[0].processes.items[0].sm_util_ratio, 0.6, 1e-9);
}

TEST_F(GpuJobShare, ProcessUtilizationDropsImpossibleSamples) {
  Open(R"({"devices": [{"processes": [{"pid": 5, "sm_util": 250}]}]})");
  job_pids_ = {5};
  Tick(0.0, true);
  Sample s = Tick(1.0, true);
  EXPECT_DOUBLE_EQ(*s.gpus[0].job_sm_util_ratio, 0.0);
}

constexpr const char* kMig = R"({"devices": [{"uuid": "GPU-mmmm", "gpm": {"2": 50},
  "mig": {"max": 7, "instances": [
    {"slot": 0, "gpu_instance_id": 1, "uuid": "MIG-1111",
     "series": {"memory_total_bytes": 2e10, "memory_used_bytes": 5e9},
     "processes": [{"pid": 31, "memory_bytes": 4e9}], "gpm": {"2": 60}},
    {"slot": 2, "gpu_instance_id": 5, "uuid": "MIG-5555",
     "series": {"memory_total_bytes": 1e10, "memory_used_bytes": 1e9}}]}}]})";

using GpuMig = FakeNvmlTest;

TEST_F(GpuMig, SlicesAreSamplesOfTheirOwn) {
  Open(kMig);
  ASSERT_NE(source_, nullptr);
  job_pids_ = {31};
  Sample s = Tick(0.1);
  ASSERT_EQ(s.gpus.size(), 3u);  // the GPU, slice 1, slice 5 (slot 1 is empty)
  EXPECT_EQ(s.gpus[0].mig_instance, -1);
  EXPECT_EQ(s.gpus[1].mig_instance, 1);
  EXPECT_EQ(s.gpus[2].mig_instance, 5);
  EXPECT_DOUBLE_EQ(*s.gpus[1].memory_total_bytes, 2e10);
  EXPECT_DOUBLE_EQ(*s.gpus[1].job_memory_bytes, 4e9);
  EXPECT_FALSE(s.gpus[1].util_ratio.has_value());  // not measured per slice
  EXPECT_TRUE(s.gpus[0].power_watts.has_value());
  EXPECT_TRUE(source_->gpus()[0].mig_enabled);
}

TEST_F(GpuMig, CudaVisibleMigUuidWatchesThatSliceAsCuda0) {
  options_.cuda_visible_devices = "MIG-5555";
  Open(kMig);
  Sample s = Tick(0.1);
  ASSERT_EQ(s.gpus.size(), 2u);  // the slice and its GPU (board power, temperature)
  EXPECT_EQ(s.gpus[1].mig_instance, 5);
  EXPECT_EQ(s.gpus[1].index, 0);
}

TEST_F(GpuMig, SliceGpmUsesTheMigSampleCall) {
  Open(kMig);
  Tick(1.0, true);
  Sample s = Tick(2.0, true);
  EXPECT_NEAR(*s.gpus[0].sm_active_ratio, 0.5, 1e-9);
  EXPECT_NEAR(*s.gpus[1].sm_active_ratio, 0.6, 1e-9);
  EXPECT_FALSE(s.gpus[2].sm_active_ratio.has_value());
}

using GpuGpm = FakeNvmlTest;

TEST_F(GpuGpm, MetricsOverTheRowBetweenTwoSamples) {
  Open(R"({"devices": [{"gpm": {"2": 80, "3": 40, "5": [[0, 0], [2, 60]], "10": 25,
                                "20": 100, "60": 2048}}]})");
  Sample first = Tick(1.0, true);
  EXPECT_FALSE(first.gpus[0].sm_active_ratio.has_value());  // one sample is not a rate
  Sample s = Tick(2.0, true);
  const GpuSample& g = s.gpus[0];
  EXPECT_NEAR(*g.sm_active_ratio, 0.8, 1e-9);
  EXPECT_NEAR(*g.sm_occupancy_ratio, 0.4, 1e-9);
  EXPECT_NEAR(*g.tensor_active_ratio, 0.45, 1e-9);  // mean of the ramp over [1, 2]
  EXPECT_NEAR(*g.dram_active_ratio, 0.25, 1e-9);
  EXPECT_NEAR(*g.gpm_pcie_tx_bytes_per_second, 100 * 1048576.0, 1e-3);
  EXPECT_NEAR(*g.nvlink_rx_bytes_per_second, 2048 * 1048576.0, 1e-3);
  EXPECT_FALSE(g.nvlink_tx_bytes_per_second.has_value());  // the device did not answer it
}

TEST_F(GpuGpm, UnsupportedDeviceHasNoGpmValues) {
  Open(R"({"devices": [{}]})");
  Tick(1.0, true);
  Sample s = Tick(2.0, true);
  EXPECT_FALSE(s.gpus[0].sm_active_ratio.has_value());
  EXPECT_EQ(Calls("nvmlGpmSampleGet"), 0);
}

TEST(GpuProbe, ReportsMissingLibrary) {
  GpuSourceOptions options;
  options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  nlohmann::json j = ProbeGpus(options, 0);
  EXPECT_FALSE(j["nvml"]["found"].get<bool>());
  EXPECT_FALSE(j["nvml"]["usable"].get<bool>());
  EXPECT_TRUE(j["nvml"].contains("detail"));
  EXPECT_TRUE(j["gpus"].empty());
}

TEST(GpuProbe, ListsWhatEachGpuSupports) {
  setenv("FAKE_NVML_SCENARIO", (std::string(FAKE_NVML_SCENARIOS_DIR) + "/two_gpus.json").c_str(),
         1);
  GpuSourceOptions options;
  options.nvml_library = FAKE_NVML_OLD_PATH;
  nlohmann::json j = ProbeGpus(options, 0.12);
  unsetenv("FAKE_NVML_SCENARIO");
  EXPECT_TRUE(j["nvml"]["usable"].get<bool>());
  EXPECT_EQ(j["driver_version"], "550.54.15");
  ASSERT_EQ(j["gpus"].size(), 2u);
  const auto& supports = j["gpus"][0]["supports"];
  EXPECT_EQ(supports["power"], "ok");
  EXPECT_EQ(supports["energy_counter"], "missing from the driver library");
  EXPECT_EQ(supports["gpm"], "missing from the driver library");
  EXPECT_EQ(supports["fan"], "not supported");
  EXPECT_TRUE(j["gpus"][0]["values"].contains("util_ratio"));
  EXPECT_NE(std::find(j["missing_symbols"].begin(), j["missing_symbols"].end(),
                      "nvmlDeviceGetComputeRunningProcesses_v3"),
            j["missing_symbols"].end());
}

#endif  // FAKE_NVML_PATH

}  // namespace
}  // namespace tv::gpu_source_more_test

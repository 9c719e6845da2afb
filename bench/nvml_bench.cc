// Cost of one GpuSource tick against the fake driver: 1 GPU with processes.
// The target is at most 0.3 ms of our own code per GPU and tick.
#include <benchmark/benchmark.h>

#ifdef FAKE_NVML_PATH

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "sources/gpu_source.h"

namespace tv {
namespace {

void BM_GpuSourceTick(benchmark::State& state) {
  std::string path = "/tmp/trainvitals_nvml_bench_" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << R"({"devices": [{"uuid": "GPU-bench",
    "processes": [{"pid": 101, "memory_bytes": 4e9, "sm_util": 60},
                  {"pid": 102, "memory_bytes": 1e9, "sm_util": 10},
                  {"pid": 103, "memory_bytes": 2e8}],
    "gpm": {"2": 70, "5": 30}}]})";
  setenv("FAKE_NVML_SCENARIO", path.c_str(), 1);
  GpuSourceOptions options;
  options.nvml_library = FAKE_NVML_PATH;
  std::vector<Notice> notices;
  auto source = GpuSource::Create(options, &notices);
  if (source == nullptr) {
    state.SkipWithError("fake NVML did not open");
    return;
  }
  Sample sample;
  sample.job.pids = {50, 101, 102, 4000};
  Tick tick;
  int64_t n = 0;
  for (auto _ : state) {
    tick.mono_s = 0.1 * static_cast<double>(n);
    tick.row_tick = ++n % 10 == 0;
    sample.gpus.clear();
    source->Read(tick, &sample, &notices);
    benchmark::DoNotOptimize(sample.gpus.data());
  }
  unlink(path.c_str());
}
BENCHMARK(BM_GpuSourceTick);

}  // namespace
}  // namespace tv

#else

static void BM_GpuSourceTickSkipped(benchmark::State& state) {
  state.SkipWithError("built without tests/fake_nvml: no fake driver to measure against");
  for (auto _ : state) {
  }
}
BENCHMARK(BM_GpuSourceTickSkipped);

#endif

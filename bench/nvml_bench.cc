// Cost of one GpuSource tick: against the fake driver (our own code: 1 GPU with
// processes, target at most 0.3 ms), and against the real driver where one is
// installed (plain ticks and row ticks, which add the energy counter, the
// driver's sample buffers, per-process SM use and GPM), in wall time.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>

#include "sources/gpu_source.h"

namespace tv {
namespace {

void BM_GpuSourceRealDriver(benchmark::State& state) {
  std::vector<Notice> notices;
  auto source = GpuSource::Create(GpuSourceOptions::FromEnvironment(), &notices);
  if (source == nullptr) {
    state.SkipWithError(notices.empty() ? "no GPU" : notices.front().message.c_str());
    return;
  }
  const bool row = state.range(0) == 1;
  Sample sample;
  sample.job.pids = {getpid()};
  auto now = [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  for (int i = 0; i < 3; ++i) source->Read({now(), true}, &sample, &notices);
  for (auto _ : state) {
    sample.gpus.clear();
    source->Read({now(), row}, &sample, &notices);
  }
  state.counters["gpus"] = static_cast<double>(sample.gpus.size());
  state.SetLabel(row ? "row tick" : "plain tick");
}
BENCHMARK(BM_GpuSourceRealDriver)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tv

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

// The findings analysis: one row judged on the sampler thread with every rule
// on, for 8 GPUs and 64 processes (target at most 20 us), and `trainvitals
// analyze` of a 24-hour run of 86,400 rows (target at most 2 s). The rows'
// memory grows, so the leak rules close a floor and fit its trend every
// leak_window_s (the leak and forecast work: at most 10 us a row).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "analysis/findings/observer.h"
#include "analysis/findings/replay.h"
#include "core/aggregator.h"
#include "core/metrics.h"
#include "sinks/row_json.h"

namespace tv {
namespace {

constexpr double kStart = 1700000000;

// A busy training row: `gpus` GPUs, each with 8 of the job's 64 processes.
Row TrainingRow(int gpus, double t) {
  Aggregator agg;
  Sample s;
  s.t = t;
  s.host.cpu_util_ratio = 0.6;
  s.host.cpu_iowait_ratio = 0.01;
  s.host.swap_used_bytes = 0;
  s.job.processes = 64;
  s.job.cpu_util_ratio = 0.5;
  s.job.memory_util_ratio = 0.4;
  s.job.memory_bytes = 2e9;
  s.host.memory_available_bytes = 100e9;
  s.host.memory_limit_bytes = 200e9;
  s.host.cgroup_memory_current_bytes = 50e9;
  s.training.steps = (t - kStart) * 10;
  s.training.steps_per_second = 10;
  s.training.data_wait_ratio = 0.03;
  s.training.phase = "train";
  for (int g = 0; g < gpus; ++g) {
    GpuSample gpu;
    gpu.index = g;
    gpu.util_ratio = 0.9;
    gpu.sm_active_ratio = 0.7;
    gpu.memory_used_bytes = 40e9;
    gpu.memory_total_bytes = 80e9;
    gpu.job_memory_bytes = 39e9;
    gpu.allocator_allocated_bytes = 30e9;
    gpu.allocator_reserved_bytes = 35e9;
    gpu.job_processes = 8;
    gpu.other_processes = 0;
    gpu.other_memory_bytes = 0;
    gpu.throttle_any_ratio = 0;
    for (int p = 0; p < 8 && gpu.processes.size < gpu.processes.items.size(); ++p) {
      gpu.processes.items[gpu.processes.size++] =
          GpuProcess{1000 + g * 8 + p, "python", true, 4e9, 0.1};
    }
    gpu.processes.known = true;
    s.gpus.push_back(gpu);
  }
  for (int r = 0; r < gpus; ++r) {
    s.training.ranks.push_back(RankSteps{r, 1000 + r, (t - kStart) * 10, {}});
  }
  agg.Add(s);
  return agg.Take(t, t - kStart);
}

// Sets every value of metric `id` in `values` to `v`.
void Set(std::vector<std::optional<Stat>>& values, MetricId id, double v) {
  if (values[id.index]) values[id.index] = Stat{v, v, v, 1};
}

// Memory grows `s` seconds in: the job and each GPU figure 1 MB/s.
void Grow(Row& row, double s) {
  Set(row.values, metric::kJobMemoryBytes, 2e9 + s * 1e6);
  for (GpuRow& g : row.gpus) {
    Set(g.values, metric::kGpuJobMemoryBytes, 39e9 + s * 1e6);
    Set(g.values, metric::kGpuAllocatorAllocatedBytes, 30e9 + s * 1e6);
    Set(g.values, metric::kGpuAllocatorReservedBytes, 35e9 + s * 1e6);
  }
}

void BM_FindingsRow(benchmark::State& state) {
  FindingsObserver observer;
  std::vector<Event> events;
  Row row = TrainingRow(8, kStart);
  double t = kStart;
  for (auto _ : state) {
    t += 1;
    row.t = t;
    row.elapsed_s = t - kStart;
    if (state.range(0) != 0) Grow(row, row.elapsed_s);
    observer.OnRow(&row, &events);
    events.clear();
  }
}
// 0: flat memory; 1: every memory figure of the job and of each GPU grows
// (the worst case: all 25 fitted at each floor).
BENCHMARK(BM_FindingsRow)->Arg(0)->Arg(1);

void BM_AnalyzeDay(benchmark::State& state) {
  int gpus = static_cast<int>(state.range(0));
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("tv_bench_day_{}_{}", gpus, getpid());
  std::filesystem::create_directories(dir);
  {
    std::ofstream meta(dir / "meta.json");
    meta << R"({"schema_version": 1, "interval_s": 1})";
    std::ofstream events(dir / "events.jsonl");
    std::ofstream samples(dir / "samples.jsonl");
    Row row = TrainingRow(gpus, kStart);
    std::string line;
    for (int s = 1; s <= 86400; ++s) {
      row.t = kStart + s;
      row.elapsed_s = s;
      line.clear();
      AppendRowJson(row, &line);
      samples << line << '\n';
    }
    std::ofstream(dir / "summary.json") << "{}";
  }
  state.counters["bytes"] = static_cast<double>(std::filesystem::file_size(dir / "samples.jsonl"));
  for (auto _ : state) {
    Verdict v = Replay(dir.string(), Thresholds());
    benchmark::DoNotOptimize(v);
    if (v.rows != 86400) state.SkipWithError("rows lost");
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_AnalyzeDay)->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace tv

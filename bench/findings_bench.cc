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
#include "core/metrics.h"
#include "sinks/row_json.h"
#include "training_row.h"

namespace tv {
namespace {

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

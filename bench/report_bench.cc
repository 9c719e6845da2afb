// `trainvitals report` of a 24-hour run of 86,400 one-second rows with 8
// GPUs (~850 MB of samples.jsonl, rows as a real run writes them): the time to
// read, downsample and write the page (target at most 3 s) and the page's size
// (counter "html_bytes", target at most 3 MB).
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/aggregator.h"
#include "core/metrics.h"
#include "sinks/row_json.h"
#include "training_row.h"
#include "views/report/report.h"

namespace tv {
namespace {

// Sets metric `id` in `values` (parallel to its table) to `v`: mean, max and last.
void SetStat(std::vector<std::optional<Stat>>& values, MetricId id, double v) {
  values[id.index] = Stat{v, v, v, 1};
}

void BM_ReportDay(benchmark::State& state) {
  int gpus = static_cast<int>(state.range(0));
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("tv_bench_report_{}_{}", gpus, getpid());
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "meta.json")
        << fmt::format(R"({{"schema_version": 1, "start_t": {}, "interval_s": 1, "host": "bench",)"
                       R"( "command": ["python", "train.py"], "gpus": []}})",
                       kStart);
    std::ofstream events(dir / "events.jsonl");
    std::ofstream samples(dir / "samples.jsonl");
    Row row = TrainingRow(gpus, kStart);  // with 8 of the job's processes on each GPU
    std::string line;
    std::vector<double> joules(gpus, 0);
    for (int s = 1; s <= 86400; ++s) {
      row.t = kStart + s;
      row.elapsed_s = s;
      double wave = std::sin(s / 600.0), noise = std::sin(s * 12.9898) * 0.5 + 0.5;
      SetStat(row.values, metric::kHostCpuUtilRatio, 0.5 + 0.2 * wave + 0.05 * noise);
      SetStat(row.values, metric::kJobCpuCores, 10 + 2 * noise);
      SetStat(row.values, metric::kHostMemoryUsedBytes, 6e10 + 1e9 * wave);
      SetStat(row.values, metric::kJobMemoryBytes, 2e9 + 1e8 * noise);
      SetStat(row.values, metric::kJobRssBytes, 9e9 + 3e8 * noise);
      SetStat(row.values, metric::kTrainingStepsPerSecond, 10 + noise);
      SetStat(row.values, metric::kTrainingDataWaitRatio, 0.03 + 0.02 * noise);
      for (int g = 0; g < gpus; ++g) {
        auto& v = row.gpus[g].values;
        double watts = 450 + 100 * noise + 10 * g;
        joules[g] += watts;
        SetStat(v, metric::kGpuUtilRatio, 0.85 + 0.1 * noise);
        SetStat(v, metric::kGpuSmActiveRatio, 0.6 + 0.2 * noise);
        SetStat(v, metric::kGpuMemoryUsedBytes, 4e10 + 1e9 * noise);
        SetStat(v, metric::kGpuJobMemoryBytes, 3.9e10 + 1e9 * noise);
        SetStat(v, metric::kGpuAllocatorAllocatedBytes, 3e10 + 2e9 * noise);
        SetStat(v, metric::kGpuAllocatorReservedBytes, 3.5e10 + 1e9 * wave);
        SetStat(v, metric::kGpuPowerWatts, watts);
        SetStat(v, metric::kGpuEnergyJoules, joules[g]);
      }
      line.clear();
      AppendRowJson(row, &line);
      samples << line << '\n';
      if (s % 3600 == 1) {  // an epoch an hour, with its train and eval phases
        events << fmt::format(
                      R"({{"t":{},"type":"phase_begin","pid":1,"rank":-1,"phase":"train"}})",
                      kStart + s)
               << '\n'
               << fmt::format(R"({{"t":{},"type":"phase_end","pid":1,"rank":-1,"phase":"train"}})",
                              kStart + s + 3000)
               << '\n';
      }
    }
    nlohmann::json epochs = nlohmann::json::array();
    for (int e = 0; e < 24; ++e) {
      epochs.push_back({{"epoch", e},
                        {"start_t", kStart + 1 + e * 3600},
                        {"duration_s", 3600},
                        {"steps", 36000},
                        {"logs", {{"loss", 1.0 / (e + 1)}}}});
    }
    std::ofstream(dir / "summary.json")
        << nlohmann::json({{"duration_s", 86400}, {"exit_code", 0}, {"epochs", epochs}}).dump();
  }
  state.counters["samples_bytes"] =
      static_cast<double>(std::filesystem::file_size(dir / "samples.jsonl"));
  ReportRequest request;
  request.run_dir = dir.string();
  for (auto _ : state) {
    ReportWritten written = WriteReport(request);
    state.counters["html_bytes"] = static_cast<double>(written.bytes);
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_ReportDay)->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace tv

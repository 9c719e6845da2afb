// Rendering /metrics for a row of every host and job metric and 8 GPUs (no
// per-process series are exported), in both formats; the target is at most
// 1 ms per render (it runs once per row on the sink thread, not per scrape).
//
//   build/release/trainvitals_bench --benchmark_filter=Prometheus
#include <benchmark/benchmark.h>

#include "core/metrics.h"
#include "sinks/prom_text.h"

namespace tv {
namespace {

Row FullRow(int gpus) {
  Row row;
  for (size_t i = 0; i < SampleMetrics().size(); ++i) {
    row.values.push_back(Stat{1234.5678 * (i + 1), 2e9, 17179869184.0, 10});
  }
  for (int g = 0; g < gpus; ++g) {
    GpuRow gpu;
    gpu.index = g;
    gpu.physical_index = g;
    for (size_t i = 0; i < GpuMetrics().size(); ++i) {
      gpu.values.push_back(Stat{0.731 * (i + 1) + g, 85899345920.0, 312.25, 10});
    }
    row.gpus.push_back(std::move(gpu));
  }
  return row;
}

PromLabels Labels(int gpus) {
  PromLabels labels{"gpu-node-017.cluster.example", "llama-finetune", {}};
  for (int g = 0; g < gpus; ++g) labels.gpus.push_back({g, -1, "NVIDIA H100 80GB HBM3"});
  return labels;
}

// Renders `row` as often as the benchmark asks; counts the page's bytes.
void Render(benchmark::State& state, const Row& row, const PromLabels& labels, PromFormat format) {
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = RenderPrometheus(row, labels, format);
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["bytes"] = static_cast<double>(bytes);
}

void BM_PrometheusRender(benchmark::State& state) {
  PromFormat format = state.range(1) != 0 ? PromFormat::kOpenMetrics : PromFormat::kText004;
  Row row = FullRow(static_cast<int>(state.range(0)));
  PromLabels labels = Labels(static_cast<int>(state.range(0)));
  Render(state, row, labels, format);
}
BENCHMARK(BM_PrometheusRender)
    ->ArgNames({"gpus", "openmetrics"})
    ->Args({8, 0})
    ->Args({8, 1})
    ->Args({0, 0});

// `serve`'s exposition: the node's host and 8 GPUs (no job figures) and 64
// jobs, each on one GPU with the job's figures; the target is at most 5 ms.
void BM_PrometheusRenderNode(benchmark::State& state) {
  PromFormat format = state.range(1) != 0 ? PromFormat::kOpenMetrics : PromFormat::kText004;
  Row row = FullRow(8);
  PromLabels labels = Labels(8);
  labels.run.clear();
  labels.node = true;
  for (int j = 0; j < state.range(0); ++j) {
    auto job = std::make_shared<JobRow>();
    auto identity = std::make_shared<JobIdentity>();
    identity->job = std::to_string(4000000 + j);
    identity->kind = "slurm";
    identity->user = "user" + std::to_string(j % 10);
    identity->account = "lab" + std::to_string(j % 3);
    identity->partition = "gpu";
    job->identity = identity;
    job->started_t = 1.7e9;
    job->row = FullRow(1);
    job->row.gpus[0].index = j % 8;
    job->allocated = {true};
    job->row.health_score = 100;
    row.jobs.push_back(std::move(job));
  }
  Render(state, row, labels, format);
}
BENCHMARK(BM_PrometheusRenderNode)->ArgNames({"jobs", "openmetrics"})->Args({64, 0})->Args({64, 1});

}  // namespace
}  // namespace tv

#include "sinks/tfevents/row_scalars.h"

#include <cmath>
#include <string_view>

namespace tv {
namespace {

void AddMetrics(std::span<const MetricDef> defs, const std::vector<std::optional<Stat>>& values,
                int gpu_index, std::vector<TbScalar>* out) {
  for (size_t i = 0; i < defs.size() && i < values.size(); ++i) {
    const MetricDef& m = defs[i];
    if (!values[i]) continue;
    const Stat& s = *values[i];
    std::string tag = TensorBoardTag(m, gpu_index);
    double v = RowValue(m, s);
    if (!std::isfinite(v)) continue;
    out->push_back({tag, static_cast<float>(TensorBoardValue(m, v))});
    if (m.kind == Kind::kGauge && m.keep_max && TensorBoardKeepsMax(m) && std::isfinite(s.max)) {
      out->push_back({tag + "_max", static_cast<float>(TensorBoardValue(m, s.max))});
    }
  }
}

}  // namespace

bool TensorBoardKeepsMax(const MetricDef& m) {
  static constexpr std::pair<Scope, std::string_view> kWithMax[] = {
      {Scope::kHost, "cpu_util_ratio"},  {Scope::kHost, "memory_used_bytes"},
      {Scope::kJob, "cpu_cores"},        {Scope::kJob, "memory_bytes"},
      {Scope::kGpu, "util_ratio"},       {Scope::kGpu, "memory_used_bytes"},
      {Scope::kGpu, "job_memory_bytes"}, {Scope::kGpu, "power_watts"},
  };
  for (const auto& [scope, name] : kWithMax) {
    if (m.scope == scope && m.name == name) return true;
  }
  return false;
}

std::vector<TbScalar> RowScalars(const Row& row) {
  std::vector<TbScalar> out;
  AddMetrics(SampleMetrics(), row.values, 0, &out);
  for (const GpuRow& gpu : row.gpus) AddMetrics(GpuMetrics(), gpu.values, gpu.index, &out);
  return out;
}

std::optional<int64_t> TbStepper::Next(const Row& row) {
  auto training = FindStat(metric::kTrainingStep, row.values);
  if (!training) training = FindStat(metric::kTrainingSteps, row.values);
  if (training && training->last >= 0) {
    int64_t step = std::llround(training->last);
    if (step <= last_) return std::nullopt;
    last_ = step;
    return step;
  }
  double intervals = interval_s_ > 0 ? std::round(row.elapsed_s / interval_s_) : 0;
  int64_t step = std::llround(intervals * interval_s_);
  if (step <= last_) step = last_ + 1;
  last_ = step;
  return step;
}

}  // namespace tv

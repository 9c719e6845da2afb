#include "analysis/findings/frame.h"

#include <cmath>

#include "core/metrics.h"

namespace tv {
namespace {

std::optional<double> Value(MetricId id, const std::vector<std::optional<Stat>>& values) {
  std::optional<Stat> s = FindStat(id, values);
  if (!s) return std::nullopt;
  return WrittenValue(Def(id), *s);
}

std::optional<double> Max(MetricId id, const std::vector<std::optional<Stat>>& values) {
  std::optional<Stat> s = FindStat(id, values);
  if (!s) return std::nullopt;
  const MetricDef& m = Def(id);
  if (!m.keep_max) return WrittenValue(m, *s);
  return RoundAsWritten(s->max, IsIntegral(m.unit));
}

std::optional<double> Value(MetricId id, const nlohmann::json& scope, const char* suffix = "") {
  if (!scope.is_object()) return std::nullopt;
  std::string key(JsonKey(Def(id)));
  key += suffix;
  auto it = scope.find(key);
  if (it == scope.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<double> Max(MetricId id, const nlohmann::json& scope) {
  return Def(id).keep_max ? Value(id, scope, "_max") : Value(id, scope);
}

const nlohmann::json& Member(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

}  // namespace

void FrameFromRow(const Row& row, Frame* f) {
  f->t = std::round(row.t * 1000) / 1000;  // as samples.jsonl writes them
  f->elapsed_s = std::round(row.elapsed_s * 1000) / 1000;
  const auto& v = row.values;
  f->job_cpu_util_ratio = Value(metric::kJobCpuUtilRatio, v);
  f->job_memory_util_ratio = Value(metric::kJobMemoryUtilRatio, v);
  f->job_processes = Value(metric::kJobProcesses, v);
  f->host_swap_used_bytes = Value(metric::kHostSwapUsedBytes, v);
  f->host_cpu_iowait_ratio = Value(metric::kHostCpuIowaitRatio, v);
  f->steps = Value(metric::kTrainingSteps, v);
  f->data_wait_ratio = Value(metric::kTrainingDataWaitRatio, v);
  f->phase = row.training.phase;
  f->gpus.resize(row.gpus.size());
  for (size_t i = 0; i < row.gpus.size(); ++i) {
    const GpuRow& r = row.gpus[i];
    GpuFrame& g = f->gpus[i];
    g.index = r.index;
    g.busy = Value(metric::kGpuSmActiveRatio, r.values);
    if (!g.busy) g.busy = Value(metric::kGpuUtilRatio, r.values);
    g.memory_used_max_bytes = Max(metric::kGpuMemoryUsedBytes, r.values);
    g.allocator_allocated_max_bytes = Max(metric::kGpuAllocatorAllocatedBytes, r.values);
    g.memory_total_bytes = Value(metric::kGpuMemoryTotalBytes, r.values);
    g.job_memory_bytes = Value(metric::kGpuJobMemoryBytes, r.values);
    g.job_processes = Value(metric::kGpuJobProcesses, r.values);
    g.other_memory_bytes = Value(metric::kGpuOtherMemoryBytes, r.values);
    g.other_processes = Value(metric::kGpuOtherProcesses, r.values);
    g.throttle_any_ratio = Value(metric::kGpuThrottleAnyRatio, r.values);
  }
  f->ranks.clear();
  if (row.training.ranks.size() > 1) {  // as samples.jsonl writes them
    for (const RankSteps& r : row.training.ranks) {
      f->ranks.push_back(RankFrame{r.rank, r.pid, RoundAsWritten(r.steps, true)});
    }
  }
}

bool FrameFromJson(const nlohmann::json& line, Frame* f) {
  const nlohmann::json& t = Member(line, "t");
  if (!t.is_number()) return false;
  f->t = t.get<double>();
  const nlohmann::json& elapsed = Member(line, "elapsed_s");
  f->elapsed_s = elapsed.is_number() ? elapsed.get<double>() : 0;
  const nlohmann::json& host = Member(line, "host");
  const nlohmann::json& job = Member(line, "job");
  const nlohmann::json& training = Member(line, "training");
  f->job_cpu_util_ratio = Value(metric::kJobCpuUtilRatio, job);
  f->job_memory_util_ratio = Value(metric::kJobMemoryUtilRatio, job);
  f->job_processes = Value(metric::kJobProcesses, job);
  f->host_swap_used_bytes = Value(metric::kHostSwapUsedBytes, host);
  f->host_cpu_iowait_ratio = Value(metric::kHostCpuIowaitRatio, host);
  f->steps = Value(metric::kTrainingSteps, training);
  f->data_wait_ratio = Value(metric::kTrainingDataWaitRatio, training);
  const nlohmann::json& phase = Member(training, "phase");
  f->phase = phase.is_string() ? phase.get<std::string>() : std::string();
  const nlohmann::json& gpus = Member(line, "gpus");
  f->gpus.clear();
  if (gpus.is_array()) {
    for (const nlohmann::json& r : gpus) {
      GpuFrame g;
      const nlohmann::json& index = Member(r, "index");
      g.index = index.is_number_integer() ? index.get<int>() : static_cast<int>(f->gpus.size());
      g.busy = Value(metric::kGpuSmActiveRatio, r);
      if (!g.busy) g.busy = Value(metric::kGpuUtilRatio, r);
      g.memory_used_max_bytes = Max(metric::kGpuMemoryUsedBytes, r);
      g.allocator_allocated_max_bytes = Max(metric::kGpuAllocatorAllocatedBytes, r);
      g.memory_total_bytes = Value(metric::kGpuMemoryTotalBytes, r);
      g.job_memory_bytes = Value(metric::kGpuJobMemoryBytes, r);
      g.job_processes = Value(metric::kGpuJobProcesses, r);
      g.other_memory_bytes = Value(metric::kGpuOtherMemoryBytes, r);
      g.other_processes = Value(metric::kGpuOtherProcesses, r);
      g.throttle_any_ratio = Value(metric::kGpuThrottleAnyRatio, r);
      f->gpus.push_back(g);
    }
  }
  f->ranks.clear();
  const nlohmann::json& ranks = Member(training, "ranks");
  if (ranks.is_array()) {
    for (const nlohmann::json& r : ranks) {
      const nlohmann::json& rank = Member(r, "rank");
      const nlohmann::json& pid = Member(r, "pid");
      const nlohmann::json& steps = Member(r, "steps");
      if (!rank.is_number_integer() || !pid.is_number_integer() || !steps.is_number()) continue;
      f->ranks.push_back(RankFrame{rank.get<int>(), pid.get<int>(), steps.get<double>()});
    }
  }
  return true;
}

}  // namespace tv

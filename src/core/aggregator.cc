#include "core/aggregator.h"

#include <algorithm>

#include "core/metrics.h"

namespace tv {

Aggregator::Aggregator() : values_(SampleMetrics().size()) {}

void Aggregator::Add(const Sample& sample) {
  auto metrics = SampleMetrics();
  for (size_t i = 0; i < metrics.size(); ++i) {
    if (auto v = metrics[i].get(sample)) values_[i].Add(*v);
  }
  const auto& cores = sample.host.core_util_ratio;
  if (cores.size() > cores_.size()) cores_.resize(cores.size());
  for (size_t i = 0; i < cores.size(); ++i) cores_[i].Add(cores[i]);

  auto gpu_metrics = GpuMetrics();
  for (const GpuSample& g : sample.gpus) {
    GpuAcc* acc = nullptr;
    for (GpuAcc& a : gpus_) {
      if (a.index == g.index && a.mig_instance == g.mig_instance) acc = &a;
    }
    if (acc == nullptr) {
      acc = &gpus_.emplace_back();
      acc->index = g.index;
      acc->physical_index = g.physical_index;
      acc->mig_instance = g.mig_instance;
      acc->values.resize(gpu_metrics.size());
    }
    for (size_t i = 0; i < gpu_metrics.size(); ++i) {
      auto v = gpu_metrics[i].get_gpu(g);
      if (!v) continue;
      auto peak = gpu_metrics[i].get_gpu_peak ? gpu_metrics[i].get_gpu_peak(g) : std::nullopt;
      acc->values[i].Add(*v, peak.value_or(*v));
    }
    acc->processes = g.processes;
  }
  // assign() reuses capacity: no allocation per tick once the shapes settle.
  training_.phase.assign(sample.training.phase);
  training_.scalars.assign(sample.training.scalars.begin(), sample.training.scalars.end());
  training_.ranks.assign(sample.training.ranks.begin(), sample.training.ranks.end());
  for (RankSteps& r : training_.ranks) {  // each training process's memory, from the tree
    auto member = std::find_if(sample.job.members.begin(), sample.job.members.end(),
                               [&](const ProcessUsage& p) { return p.pid == r.pid; });
    if (member == sample.job.members.end()) continue;
    r.memory_bytes = member->memory_bytes;
    r.memory_anon_pss_bytes = member->anon_pss_bytes;
  }
  for (const RankSteps& r : sample.training.ranks) {
    if (!r.data_wait_ratio) continue;
    auto it = std::find_if(rank_wait_.begin(), rank_wait_.end(),
                           [&](const auto& w) { return w.first == r.pid; });
    if (it == rank_wait_.end()) it = rank_wait_.insert(rank_wait_.end(), {r.pid, {}});
    it->second.Add(*r.data_wait_ratio);
  }
  ++samples_;
}

Row Aggregator::Peek(double t, double elapsed_s) const {
  Row row;
  row.t = t;
  row.elapsed_s = elapsed_s;
  row.samples = samples_;
  row.values.reserve(values_.size());
  for (const auto& acc : values_) row.values.push_back(acc.Get());
  for (const auto& acc : cores_) {
    auto s = acc.Get();
    row.core_util_ratio.push_back(s ? s->mean : 0.0);
  }
  for (const GpuAcc& g : gpus_) {
    GpuRow& out = row.gpus.emplace_back();
    out.index = g.index;
    out.physical_index = g.physical_index;
    out.mig_instance = g.mig_instance;
    for (const auto& acc : g.values) out.values.push_back(acc.Get());
    out.processes.assign(g.processes.begin(), g.processes.end());
  }
  row.training = training_;
  for (RankSteps& r : row.training.ranks) {
    r.data_wait_ratio.reset();
    for (const auto& [pid, acc] : rank_wait_) {
      if (pid == r.pid) {
        if (auto s = acc.Get()) r.data_wait_ratio = s->mean;
      }
    }
  }
  return row;
}

Row Aggregator::Take(double t, double elapsed_s) {
  Row row = Peek(t, elapsed_s);
  for (auto& acc : values_) acc.Reset();
  cores_.clear();
  gpus_.clear();
  training_ = TrainingRow{};
  rank_wait_.clear();
  samples_ = 0;
  return row;
}

}  // namespace tv

#include "analysis/cost_observer.h"

#include <algorithm>

#include "core/metrics.h"

namespace tv {
namespace {

// Adds `s`'s samples to a running sum and returns the mean so far.
double AddMean(const Stat& s, double* sum, double* samples) {
  *sum += s.mean * s.count;
  *samples += s.count;
  return *sum / *samples;
}

}  // namespace

CostForecaster::CostForecaster(CostRates rates, std::vector<GpuInfo> meta_gpus)
    : rates_(std::move(rates)), meta_gpus_(std::move(meta_gpus)) {}

void CostForecaster::AddTo(RunSummary* summary) const {
  if (std::optional<CostRecord> cost = BuildCost(*summary, meta_gpus_, rates_)) {
    summary->cost = std::move(cost);
  }
}

void CostForecaster::OnRow(Row* row, std::vector<Event>* events) {
  (void)events;
  elapsed_s_ = row->elapsed_s;
  if (start_t_ == 0) start_t_ = row->t - row->elapsed_s;
  for (const GpuRow& g : row->gpus) {
    auto it = std::find_if(gpus_.begin(), gpus_.end(),
                           [&](const GpuUse& u) { return u.index == g.index; });
    if (it == gpus_.end()) {
      // Once per GPU: its model's price.
      GpuUse& use = gpus_.emplace_back();
      use.index = g.index;
      use.gpu_hour_price = GpuHourPrice(rates_, GpuModelOf(meta_gpus_, g.index));
      sums_.emplace_back();
      it = gpus_.end() - 1;
    }
    GpuUse& use = *it;
    Sums& sums = sums_[static_cast<size_t>(it - gpus_.begin())];
    if (auto s = FindStat(metric::kGpuJobProcesses, g.values)) {
      use.processes_listed = true;
      use.job_processes_max = std::max(use.job_processes_max, s->max);
    }
    if (auto s = FindStat(metric::kGpuJobMemoryBytes, g.values))
      use.job_memory_bytes_max = std::max(use.job_memory_bytes_max, s->max);
    if (auto s = FindStat(metric::kGpuEnergyJoules, g.values)) use.energy_joules = s->last;
    if (auto s = FindStat(metric::kGpuUtilRatio, g.values); s && s->count > 0)
      use.util_ratio_mean = AddMean(*s, &sums.util, &sums.util_samples);
    if (auto s = FindStat(metric::kGpuSmActiveRatio, g.values); s && s->count > 0)
      use.sm_active_ratio_mean = AddMean(*s, &sums.sm_active, &sums.sm_active_samples);
  }
  if (auto s = FindStat(metric::kHostCpuEnergyJoules, row->values)) cpu_energy_joules_ = s->last;

  RunCost run = ComputeRunCost(gpus_, cpu_energy_joules_, row->elapsed_s, rates_);
  row->run_gpus_used = static_cast<int>(run.used.size());
  if (run.busy) row->run_gpu_busy_ratio = run.busy->ratio;
  row->run_gpu_energy_joules = run.gpu_energy_joules;
  row->run_money = run.money.Total();
  if (row->run_money) row->run_currency.assign(run.currency);
}

void CostForecaster::OnSample(const Sample& sample, std::vector<Event>* events) {
  bool ended = false;
  for (const Event& e : *events) {
    if (e.type != EventType::kEpoch) continue;
    EpochRecord epoch;
    if (!EpochFromJson(e.fields, &epoch).ok()) continue;  // the tracker's own: never
    ended = ended || epoch.planned_epochs.has_value();
    epochs_.push_back(std::move(epoch));
  }
  if (!ended || start_t_ == 0) return;
  // The run so far, as summary.json will say it.
  CostInputs so_far;
  so_far.duration_s = std::max(elapsed_s_, sample.t - start_t_);
  so_far.gpus = gpus_;
  so_far.cpu_energy_joules = cpu_energy_joules_;
  so_far.epochs = epochs_;
  CostRecord cost = BuildCost(so_far, meta_gpus_, rates_);
  if (!cost.forecast) return;
  cost.forecast->currency = cost.currency;
  events->push_back(Event{sample.t, EventType::kCostForecast, ToJson(*cost.forecast)});
}

}  // namespace tv

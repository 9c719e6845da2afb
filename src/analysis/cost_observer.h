// CostForecaster: the run's cost as it goes.
//
// On every row it sets the run-level figures so far on the row
// (Row::run_gpus_used, run_gpu_busy_ratio, run_gpu_energy_joules, run_money,
// run_currency; Prometheus exposes them) by core/run_cost.h, the code that
// BuildCost writes summary.json's "cost" with: from typed running sums of each
// GPU (no JSON), so the figures at the run's last row are summary.json's.
//
// Once an epoch of a framework call that said how many epochs it plans has
// ended, it forecasts the whole run's time, energy, CO2e and money (a
// "cost_forecast" event, with the forecast of src/analysis/cost.h), from the
// run so far and the mean of its complete epochs: it gives BuildCost its
// typed running sums and epoch records (rare: once per epoch), so the live
// forecast and summary.json's are one computation.
//
// Its part of summary.json: "cost", by BuildCost from the summary before it
// (the whole-run figures, "health", "epochs" and "phases"), absent when that
// has no duration.
//
// Thread safety: a SampleObserver, fed on the sampler thread; placed after the
// PhaseTracker, whose "epoch" events of the same sample it reads. AddTo after
// the sampler stopped.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "analysis/cost.h"
#include "core/sampler.h"
#include "store/epoch_record.h"
#include "store/summary_part.h"

namespace tv {

class CostForecaster final : public SampleObserver, public SummaryPart {
 public:
  // `meta_gpus`: meta.json's GPUs (their models, for their prices).
  CostForecaster(CostRates rates, std::vector<GpuInfo> meta_gpus);
  void OnSample(const Sample& sample, std::vector<Event>* events) override;
  void OnRow(Row* row, std::vector<Event>* events) override;
  void AddTo(RunSummary* summary) const override;

 private:
  // The sums of one GPU's rows' means weighted by their sample counts: the
  // run's mean so far, as the run's own row (summary.json) has it.
  struct Sums {
    double util = 0;
    double util_samples = 0;
    double sm_active = 0;
    double sm_active_samples = 0;
  };

  CostRates rates_;
  std::vector<GpuInfo> meta_gpus_;
  double elapsed_s_ = 0;
  double start_t_ = 0;  // unix seconds when monitoring began (the first row's t - elapsed)
  // Each GPU's whole run so far, by first sight, and its sums (parallel).
  std::vector<GpuUse> gpus_;
  std::vector<Sums> sums_;
  std::optional<double> cpu_energy_joules_;
  std::vector<EpochRecord> epochs_;  // the epoch events so far
};

}  // namespace tv

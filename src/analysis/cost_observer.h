// CostForecaster: once an epoch of a framework call that said how many epochs
// it plans has ended, forecasts the whole run's time, energy, CO2e and money
// (a "cost_forecast" event, with the forecast of src/analysis/cost.h), from
// the run so far and the mean of its complete epochs. It keeps a summary-like
// record of the run as rows close and asks BuildCost, so the live forecast and
// summary.json's are one computation.
//
// Thread safety: a SampleObserver, fed on the sampler thread; placed after the
// PhaseTracker, whose "epoch" events of the same sample it reads.
#pragma once

#include <map>
#include <nlohmann/json.hpp>

#include "analysis/cost.h"
#include "core/sampler.h"

namespace tv {

class CostForecaster final : public SampleObserver {
 public:
  // `meta`: meta.json (the GPU models, for their prices).
  CostForecaster(CostRates rates, nlohmann::ordered_json meta);
  void OnSample(const Sample& sample, std::vector<Event>* events) override;
  void OnRow(Row* row, std::vector<Event>* events) override;

 private:
  struct Gpu {
    double job_processes_max = 0;
    double job_memory_max = 0;
    bool processes_listed = false;
    std::optional<double> energy_joules;  // the counter's latest value
  };
  CostRates rates_;
  nlohmann::ordered_json meta_;
  double elapsed_s_ = 0;
  double start_t_ = 0;  // unix seconds when monitoring began (the first row's t - elapsed)
  std::map<int, Gpu> gpus_;
  std::optional<double> cpu_energy_joules_;
  nlohmann::ordered_json epochs_ = nlohmann::ordered_json::array();
};

}  // namespace tv

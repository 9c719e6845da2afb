// The run-level figures over the GPUs a job used: which GPUs those are, how
// busy they were, the energy they drew and what the run cost in money. Typed
// arithmetic, the one definition of each figure: summary.json's "cost"
// (src/analysis/cost.h BuildCost), the live run-level figures of every row
// (src/analysis/cost_observer.h, on the sampler thread: no JSON, no I/O) and
// the views that read a finished run (store/headline.h) all come here.
//
// Pure functions; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tv {

inline constexpr double kJoulesPerKwh = 3.6e6;

// The rates a run is costed at: the config file's [cost] table
// (docs/cost.md; read by LoadCostRates in src/analysis/cost.h), or those the
// run recorded in meta.json "cost_rates".
struct CostRates {
  double pue = 1.0;                 // power usage effectiveness of the site
  double grid_g_per_kwh = 475;      // CO2e per kWh: the world average CodeCarbon uses
  std::optional<double> kwh_price;  // money per kWh
  std::string currency = "USD";
  // Money per GPU-hour by GPU model: a key is matched as a case-insensitive
  // substring of the model's name ("H100" matches "NVIDIA H100 80GB HBM3");
  // "default" covers any other model.
  std::map<std::string, double> gpu_hour_price;
};

// Whether `rates` price anything (a kWh price or GPU-hour prices).
bool HasPrices(const CostRates& rates);

// The GPU-hour price of `model`: the longest key found in its name, else
// "default"; absent when neither.
std::optional<double> GpuHourPrice(const CostRates& rates, std::string_view model);

// What a run (or the run so far) shows of one GPU: the facts the used-GPU
// rule and the figures need. Means are over the whole run; the energy is the
// counter since monitoring began.
struct GpuUse {
  int index = 0;
  bool processes_listed = false;  // the driver listed its compute processes
  double job_processes_max = 0;   // the job's processes on it, at most
  double job_memory_bytes_max = 0;
  std::optional<double> util_ratio_mean;
  std::optional<double> sm_active_ratio_mean;  // GPM, where measured
  std::optional<double> energy_joules;
  // The price of an hour of this GPU's model at the run's rates
  // (GpuHourPrice); the caller fills it, once per GPU where it can.
  std::optional<double> gpu_hour_price;
};

// Which of `gpus` the job used: those where its processes or memory were
// seen; every one where the driver lists no processes on any (a container,
// some MIG setups). Parallel to `gpus`.
std::vector<bool> JobUsedGpus(std::span<const GpuUse> gpus);

// The basis a busy share is measured on.
enum class BusyBasis { kSmActive, kUtil };
// "sm_active_ratio" or "util_ratio": summary.json's cost.busy_basis.
std::string_view BusyBasisName(BusyBasis basis);

struct BusyShare {
  BusyBasis basis = BusyBasis::kUtil;
  double ratio = 0;  // the mean over the GPUs of each one's mean
};

// The busy share of `used`: on sm_active_ratio where every one measured it,
// else on util_ratio where every one did; absent otherwise (or with none).
std::optional<BusyShare> BusyShareOf(std::span<const GpuUse* const> used);
// The share of `basis` only, absent unless every one of `used` measured it.
std::optional<double> BusyShareOn(std::span<const GpuUse* const> used, BusyBasis basis);

// The energy `used` drew, in joules: the sum of those that measured it;
// absent when none did.
std::optional<double> GpuEnergyJoules(std::span<const GpuUse* const> used);

// Everything drawn, in kWh at the socket: (GPUs + CPUs) x PUE; absent when
// neither was measured.
std::optional<double> EnergyKwh(std::optional<double> gpu_joules, std::optional<double> cpu_joules,
                                const CostRates& rates);

// What a span cost in money: its GPU-hours and its energy at their prices.
struct MoneyParts {
  std::optional<double> gpu_hours;  // only when every used GPU's model has a price
  std::optional<double> energy;     // only with a kWh price and a measured energy
  // Their sum; absent when neither is known.
  std::optional<double> Total() const;
};

// The money of holding `used` for `hours_each` hours each and drawing `kwh`
// (EnergyKwh), at `rates`; each GPU's price is its gpu_hour_price.
MoneyParts PriceSpan(const CostRates& rates, std::span<const GpuUse* const> used, double hours_each,
                     std::optional<double> kwh);

// The run's headline figures over the GPUs it used, for `duration_s` seconds.
struct RunCost {
  std::vector<const GpuUse*> used;  // into the `gpus` given; valid while it is
  std::optional<BusyShare> busy;
  std::optional<double> gpu_energy_joules;
  std::optional<double> energy_kwh;  // GPUs and CPUs, times the PUE
  MoneyParts money;
  std::string currency;  // rates.currency when they price anything; else empty
};

// `gpus` (all the run watched), `cpu_energy_joules` (the CPU packages, where
// measured) and the run's duration at `rates`.
RunCost ComputeRunCost(std::span<const GpuUse> gpus, std::optional<double> cpu_energy_joules,
                       double duration_s, const CostRates& rates);

}  // namespace tv

// Cost accounting: what a run held and used of its GPUs, the energy it drew,
// and what that cost in money and CO2e, for the whole run, per epoch and per
// phase, with a forecast of the whole run when its planned epochs are known.
//
// A pure function of what summary.json says of the run (CostInputs), so a
// run directory written before costs existed is costed exactly as a new one
// (`runs import`, `report`, `compare`), and of its GPUs' models. Rates come
// from the config file's [cost] table (docs/cost.md), never from the code:
// with no price, no money is said. The used-GPU rule and the run-level
// arithmetic (busy share, energy, money) are core/run_cost.h's, which the live
// row figures use too (cost_observer.h). The cost is a CostRecord
// (store/cost_record.h), the one place that knows its keys in summary.json.
//
// summary.json "cost" (docs/schema.md):
//   gpus_used            GPUs the job used (its processes or memory on them;
//                        every watched GPU where the driver lists no processes)
//   gpu_hours            held: wall time x gpus_used
//   busy_gpu_hours       weighted by each GPU's mean sm_active_ratio (GPM) if
//                        measured, else util_ratio
//   busy_basis           "sm_active_ratio" or "util_ratio"
//   busy_ratio           busy / held
//   wasted_gpu_hours     held - busy
//   lost                 {startup_ratio, data_wait_ratio, evaluation_ratio,
//                        checkpoint_ratio, stalled_ratio, idle_gpu_ratio}: shares
//                        of the held time that did not train, from the run's
//                        health.goodput (they do not overlap; each absent at 0)
//   gpu_energy_kwh, cpu_energy_kwh (each absent when not measured), pue,
//   energy_kwh           (gpu + cpu) x pue
//   grid_g_per_kwh, co2e_kg, co2e_estimate (true: a grid average, not a meter)
//   currency, money, money_gpu_hours, money_energy   (only with prices)
//   unpriced_models      GPU models the job used that no gpu_hour_price covers
//   epochs[]             {epoch, duration_s, gpu_hours, busy_gpu_hours,
//                         energy_kwh, co2e_kg, money}
//   phases{}             {name: {duration_s, gpu_hours, busy_gpu_hours, share}}
//   forecast             {planned_epochs, epochs_done, duration_s, energy_kwh,
//                         co2e_kg, money}: the whole run had it run every
//                         planned epoch (only when it stopped short of them)
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/gpu_info.h"
#include "core/run_cost.h"
#include "store/cost_record.h"
#include "store/epoch_record.h"
#include "store/run_summary.h"

namespace tv {

// Reads the [cost] table of the TOML config file `path` ("" or no table:
// the defaults). Throws ConfigError with the file, line and key on a wrong
// key, type or value.
CostRates LoadCostRates(const std::string& path);

// What a run is costed from: what its summary.json says of it, typed.
struct CostInputs {
  double duration_s = 0;
  // Each GPU watched (summary.json "gpus"; GpuUsesOf); BuildCost prices them.
  std::vector<GpuUse> gpus;
  std::optional<double> cpu_energy_joules;  // host.cpu_energy_joules, where measured
  // health.goodput: the shares of the run's time that did not train.
  CostLost lost;
  std::vector<EpochRecord> epochs;
  PhaseRecords phases;
};

// The inputs in `summary`; none when it has no duration.
std::optional<CostInputs> CostInputsOf(const RunSummary& summary);

// summary.json's "cost" of `in`, with meta.json's GPUs (for their models).
CostRecord BuildCost(const CostInputs& in, const std::vector<GpuInfo>& gpus,
                     const CostRates& rates);
// BuildCost of CostInputsOf(summary): none when the summary has no duration.
std::optional<CostRecord> BuildCost(const RunSummary& summary, const std::vector<GpuInfo>& gpus,
                                    const CostRates& rates);

// The whole run's time, energy, CO2e and money had it run `planned` epochs,
// from what it cost so far (`duration_s` and `so_far`'s energy_kwh, co2e_kg
// and money) and the mean of its complete epochs' costs (`epochs`). None
// with no complete epoch or when none is left to run.
std::optional<CostForecast> ForecastCost(double duration_s, const CostRecord& so_far,
                                         std::span<const EpochCost> epochs, int64_t planned);

}  // namespace tv

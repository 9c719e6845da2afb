// Cost accounting: what a run held and used of its GPUs, the energy it drew,
// and what that cost in money and CO2e, for the whole run, per epoch and per
// phase, with a forecast of the whole run when its planned epochs are known.
//
// A pure function of summary.json and meta.json, so a run directory written
// before costs existed is costed exactly as a new one (`runs import`,
// `report`, `compare`). Rates come from the config file's [cost] table
// (docs/cost.md), never from the code: with no price, no money is said. The
// used-GPU rule and the run-level arithmetic (busy share, energy, money) are
// core/run_cost.h's, which the live row figures use too (cost_observer.h).
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
#include <nlohmann/json.hpp>
#include <string>

#include "core/gpu_info.h"
#include "core/run_cost.h"

namespace tv {

// Reads the [cost] table of the TOML config file `path` ("" or no table:
// the defaults). Throws ConfigError with the file, line and key on a wrong
// key, type or value.
CostRates LoadCostRates(const std::string& path);

// summary.json's "cost" from the summary and meta.json's GPUs (for their models).
// Null when the summary has no duration. Throws std::invalid_argument naming
// the key when an epoch or phase record is of the wrong shape
// (store/epoch_record.h).
nlohmann::ordered_json BuildCost(const nlohmann::ordered_json& summary,
                                 const std::vector<GpuInfo>& gpus, const CostRates& rates);

// The whole run's time, energy, CO2e and money had it run `planned` epochs,
// from what it cost so far (`so_far`: a cost object's duration_s, energy_kwh,
// co2e_kg, money) and the mean of its complete epochs' costs (`epochs`: cost
// epoch records). Null with no complete epoch or when none is left to run.
nlohmann::ordered_json ForecastCost(const nlohmann::ordered_json& so_far,
                                    const nlohmann::ordered_json& epochs, int64_t planned);

}  // namespace tv

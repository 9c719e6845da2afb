// CostRecord: summary.json's "cost" (docs/schema.md, src/analysis/cost.h) and
// the `cost_forecast` event, typed. This file alone knows their keys: the
// cost accounting (analysis/cost.h) fills the structs and calls ToJson; the
// summary, the report, `compare` and the run history read them back with
// the FromJson functions and meet only fields of the types they expect.
//
// ToJson writes the keys in the order trainvitals has always written them,
// each only when its field is set (a string only when not empty, `complete`
// only when false); "epochs" and "phases" always. Whole numbers are written as
// integers, the rest as doubles, so a cost read and written back is byte for
// byte what the file held.
//
// FromJson is lenient, as every view has read the cost: a key that is absent
// leaves its field unset, a key of another type leaves its field unset too and
// the first such is named in the Status ("key cost.busy_ratio: expected a
// number, got a string"); the rest is still read. Keys it does not know are
// ignored (an event's "t" and "type" among them).
//
// Thread-safe: plain data and pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tv {

// Shares of the GPU time held that did not train (health.goodput): each
// absent at 0.
struct CostLost {
  std::optional<double> startup_ratio;
  std::optional<double> data_wait_ratio;
  std::optional<double> evaluation_ratio;
  std::optional<double> checkpoint_ratio;
  std::optional<double> stalled_ratio;
  std::optional<double> idle_gpu_ratio;
};

// One epoch's cost (cost.epochs[]), on the GPUs the job used.
struct EpochCost {
  std::optional<int64_t> epoch;
  std::optional<double> duration_s;
  std::optional<int64_t> call;  // the framework call it belongs to
  bool complete = true;         // written only when false
  std::optional<double> gpu_hours;
  std::optional<double> busy_gpu_hours;
  std::optional<double> energy_kwh;
  std::optional<double> co2e_kg;
  std::optional<double> money;
};

// One phase's GPU time (a member of cost.phases).
struct PhaseCost {
  std::optional<double> duration_s;
  std::optional<double> gpu_hours;
  std::optional<double> busy_gpu_hours;
  std::optional<double> share;
};

// The whole run had it run every planned epoch (cost.forecast and the
// `cost_forecast` event).
struct CostForecast {
  std::optional<int64_t> planned_epochs;
  std::optional<int64_t> epochs_done;
  std::optional<double> duration_s;
  std::optional<double> energy_kwh;
  std::optional<double> co2e_kg;
  std::optional<double> money;
  // The event's only (with prices): in summary.json the cost's currency says it.
  std::string currency;
};

struct CostRecord {
  std::optional<int64_t> gpus_used;
  std::optional<double> gpu_hours;  // held
  std::optional<double> busy_gpu_hours;
  std::string busy_basis;  // "sm_active_ratio" or "util_ratio"; empty: none
  std::optional<double> busy_ratio;
  std::optional<double> wasted_gpu_hours;
  std::optional<CostLost> lost;  // written (maybe empty) when the job used GPUs
  std::optional<double> gpu_energy_kwh;
  std::optional<double> cpu_energy_kwh;
  std::optional<double> pue;
  std::optional<double> energy_kwh;  // (GPUs + CPUs) x PUE
  std::optional<double> grid_g_per_kwh;
  std::optional<double> co2e_kg;
  std::optional<bool> co2e_estimate;
  std::string currency;  // only with prices
  std::optional<double> money;
  std::optional<double> money_gpu_hours;
  std::optional<double> money_energy;
  std::vector<std::string> unpriced_models;  // written only when not empty
  std::vector<EpochCost> epochs;
  std::vector<std::pair<std::string, PhaseCost>> phases;  // in the order written
  std::optional<CostForecast> forecast;
};

nlohmann::ordered_json ToJson(const CostRecord& c);
nlohmann::ordered_json ToJson(const CostForecast& f);

// A cost object (null or absent keys: unset fields); see the top of this file
// for what a wrong type does. Messages name the key from the object down
// ("key epochs[1].money: ...").
Status CostFromJson(const nlohmann::json& j, CostRecord* out);
Status CostFromJson(const nlohmann::ordered_json& j, CostRecord* out);
// A `cost_forecast` event's fields (or a cost's "forecast").
Status ForecastFromJson(const nlohmann::json& j, CostForecast* out);
Status ForecastFromJson(const nlohmann::ordered_json& j, CostForecast* out);

// A summary's "cost": none when absent or null (a summary too odd to cost);
// messages name the key from the summary down ("key cost.busy_ratio: ...").
Status CostFromSummary(const nlohmann::json& summary, std::optional<CostRecord>* out);
Status CostFromSummary(const nlohmann::ordered_json& summary, std::optional<CostRecord>* out);

// CostFromSummary for a view, which shows what it can of a cost: none when
// the summary has none.
std::optional<CostRecord> CostOf(const nlohmann::json& summary);
std::optional<CostRecord> CostOf(const nlohmann::ordered_json& summary);

// The cost of a job of several nodes: the sums of its nodes' GPUs, GPU-hours
// (held, busy, wasted), energy, CO2e and money, the busy share of the sums.
// A figure is left out when a node lacks it (a sum of some nodes is no
// job's), money too when the nodes priced in different currencies.
CostRecord AddCosts(std::span<const CostRecord> nodes);

}  // namespace tv

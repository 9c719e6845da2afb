// The headline figures of a finished run, as the run computed them once and
// wrote them into summary.json: how busy the GPUs the job used were, their
// energy, the whole energy, the money and the health score. Every view that
// shows one of them (the summary, the report's header, `runs`, `compare`)
// reads it here rather than computing its own from the per-GPU figures, so a
// run has one number for each. The cost figures come from the run's
// CostRecord (store/cost_record.h). Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/run_cost.h"
#include "store/cost_record.h"
#include "store/run_summary.h"
#include "store/run_totals.h"

namespace tv {

struct RunHeadline {
  // summary.json "cost" (store/cost_record.h): over the GPUs the job used.
  std::optional<double> gpu_busy_ratio;  // cost.busy_ratio
  std::string busy_basis;                // cost.busy_basis: "util_ratio", "sm_active_ratio"
  std::optional<int> gpus_used;          // cost.gpus_used
  std::optional<double> gpu_energy_kwh;  // cost.gpu_energy_kwh
  std::optional<double> energy_kwh;      // cost.energy_kwh: GPUs and CPUs, times the PUE
  std::optional<double> money;           // cost.money, only with prices
  std::string currency;                  // cost.currency, with money
  // summary.json "gpus": the mean util_ratio over the GPUs the job used (the
  // rule of core/run_cost.h), whatever basis the busy share is on.
  std::optional<double> gpu_util_ratio;
  // summary.json "health": the score, else the note saying why there is none.
  std::optional<double> health_score;
  std::string health_note;
};

// The headline of `summary`; what it lacks stays unknown.
RunHeadline HeadlineOf(const RunSummary& summary);
// The same with `cost` for the summary's own (none: no cost figures).
RunHeadline HeadlineOf(const RunSummary& summary, const CostRecord* cost);

// What the totals' "gpus" say of each GPU for core/run_cost.h, in their
// order. Prices are not filled.
std::vector<GpuUse> GpuUsesOf(const RunTotals& totals);

}  // namespace tv

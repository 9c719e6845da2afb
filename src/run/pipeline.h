// The pipeline of a run, declared once: what the sampler runs each tick, in
// order (the sources it reads, then the observers it hands each sample, each
// closed row and the end to), and the order in which the observers' parts of
// summary.json are collected. Every constraint on those orders is written
// below with its reason; pipeline_test.cc checks the orders against them, and
// the sources (run/sources.h) and RunObservers follow the orders.
//
// Thread safety: RunObservers is built and read on the controlling thread; its
// observers are fed on the sampler thread (each says when it may be read).
#pragma once

#include <array>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/alerts/observer.h"
#include "analysis/cost_observer.h"
#include "analysis/findings/observer.h"
#include "analysis/phases.h"
#include "analysis/processes.h"
#include "core/sampler.h"
#include "run/training_events.h"
#include "store/summary_part.h"

namespace tv {

// A step of the pipeline: a source (or a group of them) or an observer.
enum class Stage {
  // Sources.
  kHost,         // CPU, memory, load, disks, network, cgroup (sources/host_sources.h)
  kRunDirSpace,  // the run directory's file system
  kProcessTree,  // the job's processes
  kGpu,          // the GPUs (sources/gpu_source.h)
  kMarkers,      // what the training processes say (sources/markers.h)
  // Observers.
  kTrainingEvents,  // TrainingEventLog
  kPhases,          // PhaseTracker
  kCost,            // CostForecaster
  kProcesses,       // ProcessTable
  kFindings,        // FindingsObserver
  kAlerts,          // AlertsObserver
};

std::string_view StageName(Stage stage);

// `before` comes before `after`, because of `why`.
struct OrderConstraint {
  Stage before;
  Stage after;
  std::string_view why;
};

// A tick: the sampler reads every source in this order, then hands the sample
// (and a closed row, and the end) to every observer in this order; the events
// observers return go to events.jsonl in this order too.
inline constexpr std::array<Stage, 11> kTickOrder = {
    Stage::kHost,      Stage::kRunDirSpace,    Stage::kProcessTree, Stage::kGpu,
    Stage::kMarkers,   Stage::kTrainingEvents, Stage::kPhases,      Stage::kCost,
    Stage::kProcesses, Stage::kFindings,       Stage::kAlerts,
};

inline constexpr std::array<OrderConstraint, 9> kTickConstraints = {{
    {Stage::kProcessTree, Stage::kGpu, "the GPUs' memory is attributed to the tree's PIDs"},
    {Stage::kGpu, Stage::kMarkers, "the markers fill the allocator figures of the GPUs found"},
    {Stage::kMarkers, Stage::kTrainingEvents, "it writes the sample's training events"},
    {Stage::kMarkers, Stage::kPhases, "epochs and phases come from the sample's markers"},
    {Stage::kMarkers, Stage::kProcesses, "the table keeps each process's markers"},
    {Stage::kMarkers, Stage::kFindings, "the analysis reads the sample's marks"},
    {Stage::kTrainingEvents, Stage::kPhases,
     "events.jsonl says what a process said before the epoch record it closes"},
    {Stage::kPhases, Stage::kCost, "the forecast reads the phases' epoch events of the sample"},
    {Stage::kFindings, Stage::kAlerts, "a finding rule reads the row's findings"},
}};

// summary.json's parts, added in this order after the whole-run figures.
inline constexpr std::array<Stage, 5> kSummaryOrder = {
    Stage::kPhases, Stage::kFindings, Stage::kAlerts, Stage::kCost, Stage::kProcesses,
};

inline constexpr std::array<OrderConstraint, 2> kSummaryConstraints = {{
    {Stage::kPhases, Stage::kCost, "the cost of each epoch and phase reads \"epochs\", \"phases\""},
    {Stage::kFindings, Stage::kCost, "the cost's lost time reads \"health\" (its goodput)"},
}};

// The first thing wrong with `order`: a stage twice, or a constraint broken
// ("phases after cost: ..."); empty when none. A stage the order lacks breaks
// no constraint.
std::string OrderError(std::span<const Stage> order, std::span<const OrderConstraint> constraints);

// The observers of one run. The controlling thread keeps them for the whole
// run: the sampler holds pointers to them.
struct RunObservers {
  TrainingEventLog training_events;
  PhaseTracker phases;
  ProcessTable processes;
  std::unique_ptr<CostForecaster> cost;        // needs meta.json's GPUs
  std::unique_ptr<FindingsObserver> findings;  // made with the sampler
  std::unique_ptr<AlertsObserver> alerts;      // made with the sampler

  // The observers made, in kTickOrder.
  std::vector<SampleObserver*> InTickOrder();
  // The parts made, in kSummaryOrder.
  std::vector<const SummaryPart*> InSummaryOrder() const;
};

}  // namespace tv

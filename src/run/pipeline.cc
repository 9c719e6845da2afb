#include "run/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

namespace tv {
namespace {

// The observer of `stage` (const when `o` is); null for a source or one not made.
template <typename Observers>
auto ObserverOf(Observers& o, Stage stage) {
  using Ptr =
      std::conditional_t<std::is_const_v<Observers>, const SampleObserver*, SampleObserver*>;
  switch (stage) {
    case Stage::kTrainingEvents:
      return Ptr(&o.training_events);
    case Stage::kPhases:
      return Ptr(&o.phases);
    case Stage::kCost:
      return Ptr(o.cost.get());
    case Stage::kProcesses:
      return Ptr(&o.processes);
    case Stage::kFindings:
      return Ptr(o.findings.get());
    case Stage::kAlerts:
      return Ptr(o.alerts.get());
    default:
      return Ptr(nullptr);
  }
}

}  // namespace

std::string_view StageName(Stage stage) {
  switch (stage) {
    case Stage::kHost:
      return "host";
    case Stage::kRunDirSpace:
      return "run_dir_space";
    case Stage::kProcessTree:
      return "process_tree";
    case Stage::kGpu:
      return "gpu";
    case Stage::kMarkers:
      return "markers";
    case Stage::kTrainingEvents:
      return "training_events";
    case Stage::kPhases:
      return "phases";
    case Stage::kCost:
      return "cost";
    case Stage::kProcesses:
      return "processes";
    case Stage::kFindings:
      return "findings";
    case Stage::kAlerts:
      return "alerts";
  }
  return "?";
}

std::string OrderError(std::span<const Stage> order, std::span<const OrderConstraint> constraints) {
  auto position = [&](Stage s) { return std::find(order.begin(), order.end(), s) - order.begin(); };
  for (size_t i = 0; i < order.size(); ++i) {
    if (static_cast<size_t>(position(order[i])) != i) {
      return fmt::format("{} twice", StageName(order[i]));
    }
  }
  auto end = static_cast<std::ptrdiff_t>(order.size());
  for (const OrderConstraint& c : constraints) {
    std::ptrdiff_t before = position(c.before), after = position(c.after);
    if (before < end && after < end && before > after) {
      return fmt::format("{} after {}: {}", StageName(c.before), StageName(c.after), c.why);
    }
  }
  return "";
}

std::vector<SampleObserver*> RunObservers::InTickOrder() {
  std::vector<SampleObserver*> out;
  for (Stage stage : kTickOrder) {
    if (SampleObserver* o = ObserverOf(*this, stage)) out.push_back(o);
  }
  return out;
}

std::vector<const SummaryPart*> RunObservers::InSummaryOrder() const {
  std::vector<const SummaryPart*> out;
  for (Stage stage : kSummaryOrder) {
    // Every observer in the summary order is a part; the others are not asked.
    if (auto* part = dynamic_cast<const SummaryPart*>(ObserverOf(*this, stage))) {
      out.push_back(part);
    }
  }
  return out;
}

}  // namespace tv

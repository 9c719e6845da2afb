// SummaryPart: what an observer of a run adds to summary.json once the sampler
// has stopped: its own keys, named and shaped in its own file. The run asks its
// parts in one declared order (run/pipeline.h), after the outcome and the
// whole-run figures (views/summary.h BuildSummary); a part may read the keys
// of the parts before it.
//
// Thread safety: AddTo on the controlling thread, after the sampler stopped.
#pragma once

#include <nlohmann/json.hpp>

namespace tv {

class SummaryPart {
 public:
  virtual ~SummaryPart() = default;
  // Sets this part's keys of `summary` (an object); leaves the others alone.
  virtual void AddTo(nlohmann::ordered_json* summary) const = 0;
};

}  // namespace tv

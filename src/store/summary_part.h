// SummaryPart: what an observer of a run adds to summary.json once the sampler
// has stopped: its own typed part of the RunSummary (store/run_summary.h). The
// run asks its parts in one declared order (run/pipeline.h), after the outcome
// and the whole-run figures; a part may read the parts before it (the cost
// reads the epochs, the phases and the health).
//
// Thread safety: AddTo on the controlling thread, after the sampler stopped.
#pragma once

#include "store/run_summary.h"

namespace tv {

class SummaryPart {
 public:
  virtual ~SummaryPart() = default;
  // Sets this part's fields of `summary`; leaves the others alone.
  virtual void AddTo(RunSummary* summary) const = 0;
};

}  // namespace tv

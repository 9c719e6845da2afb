// What a stalled process's stacks say (the `stacks` event, docs/markers.md
// "Stacks"), in the words of the `stalled` finding: a sentence for its
// message and the advice that fits where it waits.
#pragma once

#include <string>
#include <vector>

#include "analysis/findings/table.h"
#include "core/training_sample.h"
#include "store/finding_record.h"

namespace tv {

// The evidence keys a finding gets from `w`: waits_in, frame, at, code,
// stacks (the file), state (no answer).
Evidence StackEvidence(const StackWait& w);
// " Its stacks: it waits in a collective, all_reduce (...), from
// /job/train.py:30 in main: `dist.all_reduce(t)`."
std::string StackSentence(const StackWait& w);
// The advice for a process that waits as `w` says; `others`: the other
// processes' waits from the same capture (their ranks), for a collective;
// `pid`: the process. Empty when `w` says nothing the default advice does not.
std::string StackAdvice(const StackWait& w, Framework framework, int pid,
                        const std::vector<std::pair<int, StackWait>>& others);

}  // namespace tv

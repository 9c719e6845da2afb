// `trainvitals stacks RUN|PID`: finds the running session, asks it through
// its marker socket for its training processes' Python stacks (a `request`
// marker, docs/markers.md "Stacks") and reads the `stacks` events its answer
// makes in the run's events.jsonl.
//
// Thread safety: free functions; each call on its own.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/training_sample.h"
#include "store/live_record.h"

namespace tv {

// The running session `target` names: its run directory, or the PID of the
// monitor, of the job's root or of any process under it. NotFound saying
// which sessions run when none matches.
Status FindLiveSession(const std::string& target, LiveIdentity* out);

// Asks `session` for the stacks and waits up to `wait_s` for its `stacks`
// events (each process's, in the order written).
Status AskForStacks(const LiveIdentity& session, double wait_s, std::vector<TrainingEvent>* out);

}  // namespace tv

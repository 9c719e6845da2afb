// `trainvitals stacks|profile RUN|PID`: finds the running session, asks it
// through its marker socket (a `request` marker, docs/markers.md "Stacks",
// "Profiles") and reads the events its answer makes in the run's
// events.jsonl (`stacks`, `profile`).
//
// Thread safety: free functions; each call on its own.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "core/training_sample.h"
#include "markers/protocol.h"
#include "store/live_record.h"

namespace tv {

// The running session `target` names: its run directory, or the PID of the
// monitor, of the job's root or of any process under it. NotFound saying
// which sessions run when none matches.
Status FindLiveSession(const std::string& target, LiveIdentity* out);

// Sends `request` (its `what`; the id is made here) to `session` and waits up
// to `wait_s` for the events that answer it (`stacks` or `profile`, each
// process's, in the order written): until `settle_s` passed with no more.
// NotFound when none came; Unavailable when the session takes no requests.
Status AskSession(const LiveIdentity& session, Marker request, double wait_s, double settle_s,
                  std::vector<TrainingEvent>* out);

}  // namespace tv

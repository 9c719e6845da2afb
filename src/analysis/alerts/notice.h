// AlertNotice: one change of an alert instance (a rule, and its GPU for a
// per-GPU rule) that its actions deliver: it began firing, it still fires
// (the rule's repeat interval), or it resolved. Made on the sampler thread,
// handed by value to AlertActions, which deliver it on their own thread.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/alerts/rule.h"

namespace tv {

struct AlertNotice {
  enum class State { kFiring, kRepeat, kResolved };
  State state = State::kFiring;
  const AlertRule* rule = nullptr;  // lives as long as the run's rule set
  int gpu = -1;                     // the GPU's index (as the job numbers it); -1: none
  double t = 0;                     // unix seconds of the change
  double starts_at = 0;             // when this firing began
  std::optional<double> value;      // the expression's value at `t` (absent for a finding rule)
  // The rule's summary, filled in; for a resolved notice what holds now
  // (AlertResolvedText: "job memory 524 MiB, back under 600 MiB").
  std::string summary;
  bool run_ended = false;  // resolved by the run's end, not by its condition clearing
};

// The run an alert belongs to, for its labels and its actions.
struct AlertContext {
  std::string run;  // the run's name
  std::string host;
  std::string run_dir;  // command output goes under <run_dir>/alerts/
  int job_pid = 0;      // the job's root process (the signal action); 0: none
};

// "firing", "repeat" or "resolved".
std::string_view StateName(AlertNotice::State state);

// The alert as one JSON document, what the webhook posts and the command
// reads on stdin (a wire format; the alert_* events of events.jsonl are
// store/alert_record.h's): name, state, severity, gpu, value,
// threshold, expr, summary, labels, starts_at, ends_at, resolved_by
// ("condition" or "run_end"; null unless resolved), run, host, and a
// Slack-compatible "text".
nlohmann::ordered_json NoticeJson(const AlertNotice& notice, const AlertContext& context);

}  // namespace tv

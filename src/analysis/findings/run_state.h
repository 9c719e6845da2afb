// RunState: what the analyzer knows of the whole run, kept up to date from
// its rows and marks before the rules judge a row or mark: the thresholds, the
// training processes, when the run and its first step began. The rules read
// it; only the analyzer writes it.
//
// Thread safety: none; the analyzer's thread owns it.
#pragma once

#include <map>
#include <optional>
#include <string_view>

#include "analysis/findings/frame.h"
#include "analysis/findings/oom.h"
#include "analysis/findings/table.h"

namespace tv {

// Whether time in `phase` (empty: none) is training: evaluation, prediction,
// testing, checkpoints and the other named phases are not.
inline bool TrainingPhase(std::string_view phase) { return phase.empty() || phase == "train"; }

struct RunState {
  RunState(Thresholds thresholds, double interval) : th(thresholds), interval_s(interval) {}

  // Whether a row is training: without phase markers every row is;
  // evaluation, prediction and testing are not (an idle GPU there is no idle
  // run), nor, once the job has named its train phase, the time outside every
  // phase (between framework calls, the teardown after the last).
  bool Training(const Frame& f) const;
  // Whether a row is past the warm-up, with the job still running: from
  // warmup_s after the first step with step markers, else after the start.
  bool Judged(const Frame& f) const;
  // With step markers: enough steps and training seconds since the first
  // step for the step-based rules (judge_min_steps, judge_min_s).
  bool StepEvidence(const Frame& f) const;
  // Whether the run's step markers measure its productive time.
  bool StepsMeasured() const { return markers && first_step_t.has_value(); }

  Thresholds th;
  double interval_s;                       // the sampling interval, > 0
  Framework framework = Framework::kNone;  // from the first client_start
  bool markers = false;                    // a training process spoke
  std::optional<double> start_t;
  std::optional<double> first_step_t;
  std::optional<double> steps_at_first;  // the job's steps at the first step's row
  std::optional<double> end_t;           // set by Finish
  double last_t = 0;                     // the newest row's time
  std::map<int, int> clients;            // live training processes: pid -> rank
  int lowest_rank_pid = 0;               // whose epochs and phases count
  std::optional<JobEnd> job_end;         // how the job ended (oom.h), before Finish
};

}  // namespace tv

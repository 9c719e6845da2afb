// Rule: one finding's judgement (or a few that read the same state), with the
// state it keeps between rows as its own members. The analyzer hands every
// rule each mark and each row, in the order rules.h lists them, then the run's
// end; a rule opens and closes its findings through the RuleContext.
//
// Thread safety: none; the analyzer's thread owns its rules.
#pragma once

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "analysis/findings/finding_log.h"
#include "analysis/findings/frame.h"
#include "analysis/findings/mark.h"
#include "analysis/findings/run_state.h"
#include "analysis/findings/window.h"
#include "core/event.h"

namespace tv {

// What a rule sees while it judges one row, mark or the end: the run's
// state, read-only, and the finding log it writes, with the events the call
// appends to.
class RuleContext {
 public:
  RuleContext(const RunState& run, FindingLog& log, std::vector<Event>* events)
      : run(run), th(run.th), log_(log), events_(events) {}

  // Feeds `cond` at `t` into `tracker`, closing its finding once clear for
  // hold_s; true when the finding should open now (it held for
  // `open_after_s`): the rule then builds the evidence and calls Open.
  bool Due(Tracker& tracker, double t, bool cond, double open_after_s);
  void Open(FindingId id, Tracker& tracker, double t, const FindingSubject& subject,
            Opening opening);
  void Close(Tracker& tracker, double t);
  // What was learnt after the finding of `tracker` opened (finding_log.h).
  void Amend(const Tracker& tracker, const Evidence& evidence, std::string message,
             std::string advice) {
    if (tracker.open()) log_.Amend(tracker.record, evidence, std::move(message), std::move(advice));
  }
  // The rule of `id` applies to this run / has had the evidence to judge it
  // (for `not_judged`).
  void Want(FindingId id) { log_.Want(id); }
  void Judging(FindingId id) { log_.Judging(id); }
  // Another event than a finding's (the `oom` event).
  void Emit(Event event) { events_->push_back(std::move(event)); }
  // A profile of the next steps would let the rule judge `id` (finding_log.h).
  void Probe(FindingId id) { log_.Probe(id); }
  // A memory risk for the training processes (leaks, OOM forecasts).
  void Risk(const MemoryRisk& risk) { log_.AddRisk(risk); }
  const FindingLog& log() const { return log_; }

  const RunState& run;
  const Thresholds& th;

 private:
  FindingLog& log_;
  std::vector<Event>* events_;
};

class Rule {
 public:
  virtual ~Rule() = default;
  // A mark, after the run state took it in.
  virtual void OnMark(const Mark& /*mark*/, RuleContext& /*cx*/) {}
  // A row, after the run state took it in.
  virtual void OnFrame(const Frame& frame, RuleContext& cx) = 0;
  // The run ended (run.end_t is set): whole-run verdicts.
  virtual void Finish(RuleContext& /*cx*/) {}
};

}  // namespace tv

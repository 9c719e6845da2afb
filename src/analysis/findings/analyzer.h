// Analyzer: judges a run from its rows and what the training processes said,
// and keeps the findings (../DESIGN.md, "Findings"). One code path, live and
// offline: live, FindingsObserver feeds it on the sampler thread; `trainvitals
// analyze` feeds it the run directory's files (replay.h). It sees rows as
// samples.jsonl holds them (Frame) and marks as events.jsonl holds them (Mark),
// a mark before the first row whose time is at least kMarkHold_s after it, so
// both ways reach the same findings. It keeps the run's state (run_state.h)
// and where its time went (time_spent.h), and hands each mark and row to the
// rules (rules.h), which write the finding log (finding_log.h).
//
// Thread safety: none; one thread feeds it and reads it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "analysis/findings/finding_log.h"
#include "analysis/findings/frame.h"
#include "analysis/findings/mark.h"
#include "analysis/findings/oom.h"
#include "analysis/findings/rules.h"
#include "analysis/findings/run_state.h"
#include "analysis/findings/table.h"
#include "analysis/findings/time_spent.h"
#include "core/event.h"
#include "core/row.h"
#include "store/health_record.h"

namespace tv {

class Analyzer {
 public:
  explicit Analyzer(Thresholds thresholds = Thresholds(), double interval_s = 1,
                    RuleChoice rules = RuleChoice::kAll);

  // Takes in what a training process said; eval-heavy is judged at an epoch's end.
  void OnMark(const Mark& mark, std::vector<Event>* events);
  // Judges one row; appends finding_open / finding_close events.
  void OnFrame(const Frame& frame, std::vector<Event>* events);
  // How the job ended (oom.h), before Finish.
  void OnJobEnd(const JobEnd& end) { run_.job_end = end; }
  // The run ended at `t`: whole-run verdicts. Open findings stay open (no
  // closed_t: they lasted to the end).
  void Finish(double t, std::vector<Event>* events);

  // Every finding, the worst first (severity, then share of the run), each in
  // the shape of ../DESIGN.md "Findings".
  std::vector<FindingRecord> Findings() const {
    return log_.Sorted(run_.end_t.value_or(run_.last_t));
  }
  // The score with what took its points (or why there is none), where the
  // time went, the rules not judged yet, and each epoch's score
  // (docs/findings.md "Health score").
  HealthRecord Health() const;
  // The score so far of the time spent as `spent` says (LiveTimeSpent(), for
  // the status line and Prometheus); nullopt before anything was judged.
  std::optional<double> HealthScore(const TimeLedger& spent) const;
  // Where the time went so far (goodput.h), as booked: the rows whose phase
  // marks are in (half a second after them), for the counters, which only rise.
  const TimeLedger& TimeSpent() const { return time_.ledger(); }
  // The same with the newest rows booked as the marks so far say, for the
  // gauges (goodput, health), which would otherwise lag a row behind.
  TimeLedger LiveTimeSpent() const { return time_.Provisional(); }
  // Whether the run's step markers measure its productive time.
  bool StepsMeasured() const { return run_.StepsMeasured(); }
  // The rules that apply to this run but have not had the evidence to judge
  // yet (too few steps, too short a run), in table order.
  void NotJudged(std::vector<std::string_view>* out) const { log_.NotJudged(out); }
  // Each finding id opened so far, in the order first opened: whether one is
  // open now and its worst severity (for Prometheus).
  void FindingStates(std::vector<Row::Finding>* out) const { log_.States(out); }
  // The memory risks opened since the last call (leaks, OOM forecasts), for
  // the training processes.
  std::vector<MemoryRisk> TakeRisks() { return log_.TakeRisks(); }
  // The findings opened since the last call.
  std::vector<std::pair<FindingId, FindingSubject>> TakeOpened() { return log_.TakeOpened(); }
  // The findings a rule needs a profile of the next steps to judge, since the last call.
  std::vector<FindingId> TakeProbes() { return log_.TakeProbes(); }
  // Each memory figure's trend: its floors, growth per hour (and per epoch)
  // with a confidence, and whether it is a leak or not enough evidence yet.
  std::vector<MemoryTrendRecord> MemoryTrends() const { return rules_.memory->Trends(); }

 private:
  // A profile taken for a finding: the finding says what its trace shows.
  void AddProfile(const ProfileCapture& p);
  // Whether any row was judged or any finding opened: else no score.
  // With step markers the score stands from the first step (the time is measured).
  bool JudgedAny() const {
    return run_.start_t && (!log_.records().empty() || judged_s_ > 0 || StepsMeasured());
  }

  RunState run_;
  FindingLog log_;
  std::set<int> profiled_;  // findings a profile spoke for already
  RuleSet rules_;
  TimeAccount time_;
  double judged_s_ = 0;  // seconds of judged training rows
  double ledger_t_ = 0;  // the previous row's end, for the time ledger
};

}  // namespace tv

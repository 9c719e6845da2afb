// TimeAccount: where each row's time went (goodput.h). It books every row to
// one or two categories, for the run and for each of the lowest rank's
// epochs (by the part of the row inside each), so that their categories add up
// to their wall time; with them the mean GPU busy of the judged training rows,
// for the health score. A row is booked once the marks of its time are in
// (kMarkHold_s after its end): a row the lowest rank's phases change in is
// split at the changes, so a 0.1 s evaluation inside a 1 s row books 0.1 s.
//
// Thread safety: none; the analyzer's thread owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/findings/frame.h"
#include "analysis/findings/goodput.h"
#include "analysis/findings/mark.h"
#include "analysis/findings/run_state.h"
#include "core/open_phases.h"

namespace tv {

class TimeAccount {
 public:
  struct Epoch {
    int64_t epoch = 0;
    double begin_t = 0;
    double end_t = 0;
    double busy_sum = 0;  // mean GPU busy of its judged training rows
    int busy_rows = 0;
    TimeLedger ledger;
  };

  // The first training process spoke: the time before it was start-up.
  void FirstClient();
  // The lowest rank's phase began or ended (phase_begin, phase_end), or it
  // left (client_end: it is in no phase).
  void PhaseMark(const Mark& m);
  void EpochBegin(int64_t epoch, double t);
  void EpochEnd(int64_t epoch, double t);
  // A judged training row's mean GPU busy, for the run and its open epochs.
  void AddBusy(double busy);
  // Takes a row of `row_s` seconds ending at f.t, and books the rows whose
  // marks are in; `stalled`: the job or a rank is stalled now.
  void Account(const Frame& f, const RunState& run, bool stalled, double row_s);
  // The run ended: the rows not booked yet, and those still waiting for a step.
  void Finish(bool stalled);

  const TimeLedger& ledger() const { return booking_.ledger; }
  // The ledger with the rows still waiting for their marks booked as the
  // marks so far say: for the live views (the status line, the gauges), which
  // would otherwise lag a row and a half behind. The same as ledger() once the
  // run has finished.
  TimeLedger Provisional() const;
  const std::vector<Epoch>& done_epochs() const { return done_epochs_; }
  // The mean GPU busy of the judged training rows; nullopt without GPUs.
  std::optional<double> BusyMean() const;

 private:
  // The stretch of time (t0, t1] some seconds were spent in.
  struct Span {
    double t0 = 0;
    double t1 = 0;
  };
  // What a row said when it came, kept until its marks are in.
  struct Row {
    Span span;
    std::string phase;  // at its end, as the row says it
    enum class Kind { kUnmarked, kStartup, kGone, kRunning } kind = Kind::kRunning;
    bool held_idle = false;  // the job holds GPUs, all idle
    bool advanced = false;   // its steps advanced
    bool stalled = false;
    double wait = 0;  // its data wait share
  };
  // A training row whose steps had not advanced yet: part of a long step, or
  // of a stall once one is established.
  struct PendingRow {
    Span span;
    double seconds = 0;  // its computing part (its data wait is booked at once)
  };
  void BookRows(double until_t);
  void BookRow(const Row& r);
  void BookRunning(const Row& r);
  // The training part of a running row: data wait, and its computing productive
  // once its steps advance (pending until then), or stalled.
  void BookTraining(const Row& r, double train_s);
  // The row's time in each phase, in order (into segments_): the lowest
  // rank's phases from its marks, else the row's own phase; takes the
  // phase changes up to the row's end.
  void SplitByPhase(const Row& r);
  void Book(Spent where, Span span, double seconds);
  void FlushPending(Spent where);

  // What booking the run's rows reads and writes, apart from the epochs:
  // Provisional books a copy of it alone.
  struct Booking {
    TimeLedger ledger;
    std::deque<Row> rows;  // taken, not booked
    std::vector<PendingRow> pending;
    bool first_client = false;
    // The lowest rank's changes of its innermost phase not booked yet:
    // (time, the innermost phase after it).
    std::deque<std::pair<double, std::string>> phase_changes;
    bool phases_marked = false;  // it has said a phase
    std::string booked_phase;    // its phase at the end of the last booked row
  } booking_;
  std::map<int64_t, Epoch> epochs_;  // begun, not ended
  std::vector<Epoch> done_epochs_;   // in the order they ended
  OpenPhases open_phases_;           // the lowest rank's open phases, innermost last
  std::vector<std::pair<std::string, Span>> segments_;  // reused by BookRunning
  std::optional<double> ledger_steps_;                  // the job's steps at the previous row
  double busy_sum_ = 0;
  int busy_rows_ = 0;
};

}  // namespace tv

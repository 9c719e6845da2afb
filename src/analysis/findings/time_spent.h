// TimeAccount: where each row's time went (goodput.h). It books every row to
// one or two categories, for the run and for each of the lowest rank's
// epochs, so that their categories add up to their wall time; with them the
// mean GPU busy of the judged training rows, for the health score.
//
// Thread safety: none; the analyzer's thread owns it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "analysis/findings/frame.h"
#include "analysis/findings/goodput.h"
#include "analysis/findings/run_state.h"

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
  void EpochBegin(int64_t epoch, double t);
  void EpochEnd(int64_t epoch, double t);
  // A judged training row's mean GPU busy, for the run and its open epochs.
  void AddBusy(double busy);
  // Books a row of `row_s` seconds; `stalled`: the job or a rank is stalled now.
  void Account(const Frame& f, const RunState& run, bool stalled, double row_s);
  // The run ended: the rows still waiting for a step.
  void Finish(bool stalled) { FlushPending(stalled ? Spent::kStalled : Spent::kProductive); }

  const TimeLedger& ledger() const { return ledger_; }
  const std::vector<Epoch>& done_epochs() const { return done_epochs_; }
  // The mean GPU busy of the judged training rows; nullopt without GPUs.
  std::optional<double> BusyMean() const;

 private:
  // A training row whose steps had not advanced yet: part of a long step, or
  // of a stall once one is established.
  struct PendingRow {
    double t = 0;
    double seconds = 0;  // its computing part (its data wait is booked at once)
  };
  void Book(Spent where, double t, double seconds);
  void FlushPending(Spent where);

  TimeLedger ledger_;
  std::map<int64_t, Epoch> epochs_;  // begun, not ended
  std::vector<Epoch> done_epochs_;
  std::vector<PendingRow> pending_;
  std::optional<double> ledger_steps_;  // the job's steps at the previous row
  double busy_sum_ = 0;
  int busy_rows_ = 0;
};

}  // namespace tv

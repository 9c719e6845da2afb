#include "analysis/findings/time_spent.h"

#include <algorithm>

namespace tv {
namespace {

// Whether the job holds a GPU and every GPU it holds is idle.
bool HeldIdle(const Frame& f, const Thresholds& th) {
  bool held = false;
  for (const GpuFrame& g : f.gpus) {
    if (g.job_memory_bytes.value_or(0) <= 0) continue;
    held = true;
    if (!g.busy || *g.busy >= th[Th::kGpuIdleRatio]) return false;
  }
  return held;
}

}  // namespace

void TimeAccount::FirstClient() {
  ledger_.Move(Spent::kUnattributed, Spent::kStartup);
  ledger_.Move(Spent::kIdleGpu, Spent::kStartup);
}

void TimeAccount::EpochBegin(int64_t epoch, double t) {
  epochs_[epoch] = Epoch{.epoch = epoch, .begin_t = t};
}

void TimeAccount::EpochEnd(int64_t epoch, double t) {
  auto it = epochs_.find(epoch);
  if (it == epochs_.end()) return;
  Epoch s = it->second;
  epochs_.erase(it);
  s.end_t = t;
  done_epochs_.push_back(s);
}

void TimeAccount::AddBusy(double busy) {
  busy_sum_ += busy;
  ++busy_rows_;
  for (auto& [e, s] : epochs_) s.busy_sum += busy, ++s.busy_rows;
}

std::optional<double> TimeAccount::BusyMean() const {
  if (busy_rows_ == 0) return std::nullopt;
  return busy_sum_ / busy_rows_;
}

void TimeAccount::Book(Spent where, double t, double seconds) {
  if (seconds <= 0) return;
  ledger_.Add(where, seconds);
  for (auto& [e, s] : epochs_) {
    if (t > s.begin_t) s.ledger.Add(where, seconds);
  }
}

void TimeAccount::FlushPending(Spent where) {
  for (const PendingRow& p : pending_) {
    ledger_.Add(where, p.seconds);
    for (auto& [e, s] : epochs_) {
      if (p.t > s.begin_t) s.ledger.Add(where, p.seconds);
    }
    for (Epoch& s : done_epochs_) {
      if (p.t > s.begin_t && p.t <= s.end_t) s.ledger.Add(where, p.seconds);
    }
  }
  pending_.clear();
}

void TimeAccount::Account(const Frame& f, const RunState& run, bool stalled, double row_s) {
  std::optional<double> before = ledger_steps_;
  ledger_steps_ = f.steps;
  if (row_s <= 0) return;
  if (!run.markers) {
    Book(HeldIdle(f, run.th) ? Spent::kIdleGpu : Spent::kUnattributed, f.t, row_s);
    return;
  }
  // The first step's row is start-up: the first step's time is.
  if (!run.first_step_t || f.t <= *run.first_step_t) {
    Book(Spent::kStartup, f.t, row_s);
    return;
  }
  bool gone = (f.job_processes && *f.job_processes == 0) || run.clients.empty();
  if (gone || !run.Training(f)) {
    // Steps that did not advance before a phase ended were its last long
    // step; before the processes left, their teardown.
    FlushPending(gone ? Spent::kOtherPhases : Spent::kProductive);
    if (gone) {
      Book(HeldIdle(f, run.th) ? Spent::kIdleGpu : Spent::kOtherPhases, f.t, row_s);
    } else {
      Book(SpentInPhase(f.phase), f.t, row_s);
    }
    return;
  }
  double wait = std::clamp(f.data_wait_ratio.value_or(0), 0.0, 1.0);
  bool advanced = f.steps && before && *f.steps > *before;
  if (advanced) {
    FlushPending(Spent::kProductive);
  } else if (stalled) {
    FlushPending(Spent::kStalled);
    Book(Spent::kStalled, f.t, row_s);
    return;
  }
  Book(Spent::kDataWait, f.t, row_s * wait);
  if (advanced) {
    Book(Spent::kProductive, f.t, row_s * (1 - wait));
  } else {
    pending_.push_back({f.t, row_s * (1 - wait)});
  }
}

}  // namespace tv

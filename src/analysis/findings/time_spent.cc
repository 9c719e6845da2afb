// Where each row's time went (goodput.h): the analyzer books every row to one
// or two categories, so the run's and each epoch's categories add up to
// their wall time.
#include <algorithm>

#include "analysis/findings/analyzer.h"

namespace tv {

bool Analyzer::StalledNow() const {
  if (job_steps_.stalled.true_since) return true;
  return std::any_of(rank_steps_.begin(), rank_steps_.end(),
                     [](const auto& r) { return r.second.stalled.true_since.has_value(); });
}

bool Analyzer::HeldIdle(const Frame& f) const {
  bool held = false;
  for (const GpuFrame& g : f.gpus) {
    if (g.job_memory_bytes.value_or(0) <= 0) continue;
    held = true;
    if (!g.busy || *g.busy >= th_[Th::kGpuIdleRatio]) return false;
  }
  return held;
}

void Analyzer::Book(Spent where, double t, double seconds) {
  if (seconds <= 0) return;
  ledger_.Add(where, seconds);
  for (auto& [e, s] : epochs_) {
    if (t > s.begin_t) s.ledger.Add(where, seconds);
  }
}

void Analyzer::FlushPending(Spent where) {
  for (const PendingRow& p : pending_) {
    ledger_.Add(where, p.seconds);
    for (auto& [e, s] : epochs_) {
      if (p.t > s.begin_t) s.ledger.Add(where, p.seconds);
    }
    for (auto& [e, s] : done_epochs_) {
      if (p.t > s.begin_t && p.t <= s.end_t) s.ledger.Add(where, p.seconds);
    }
  }
  pending_.clear();
}

void Analyzer::Account(const Frame& f, double row_s) {
  std::optional<double> before = ledger_steps_;
  ledger_steps_ = f.steps;
  if (row_s <= 0) return;
  if (!markers_) {
    Book(HeldIdle(f) ? Spent::kIdleGpu : Spent::kUnattributed, f.t, row_s);
    return;
  }
  // The first step's row is start-up: the first step's time is.
  if (!first_step_t_ || f.t <= *first_step_t_) {
    Book(Spent::kStartup, f.t, row_s);
    return;
  }
  bool gone = (f.job_processes && *f.job_processes == 0) || clients_.empty();
  if (gone || !Training(f)) {
    // Steps that did not advance before a phase ended were its last long
    // step; before the processes left, their teardown.
    FlushPending(gone ? Spent::kOtherPhases : Spent::kProductive);
    if (gone) {
      Book(HeldIdle(f) ? Spent::kIdleGpu : Spent::kOtherPhases, f.t, row_s);
    } else {
      Book(SpentInPhase(f.phase), f.t, row_s);
    }
    return;
  }
  double wait = std::clamp(f.data_wait_ratio.value_or(0), 0.0, 1.0);
  bool advanced = f.steps && before && *f.steps > *before;
  if (advanced) {
    FlushPending(Spent::kProductive);
  } else if (StalledNow()) {
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

void Analyzer::NotJudged(std::vector<std::string_view>* out) const {
  out->clear();
  for (size_t i = 0; i < kFindingCount; ++i) {
    if (judge_[i] == 1) out->push_back(Def(static_cast<FindingId>(i)).name);
  }
}

}  // namespace tv

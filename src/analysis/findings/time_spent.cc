#include "analysis/findings/time_spent.h"

#include <algorithm>
#include <limits>
#include <string_view>

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
  booking_.first_client = true;
  booking_.ledger.Move(Spent::kUnattributed, Spent::kStartup);
  booking_.ledger.Move(Spent::kIdleGpu, Spent::kStartup);
}

void TimeAccount::PhaseMark(const Mark& m) {
  if (m.type == EventType::kPhaseBegin) {
    booking_.phases_marked = true;
    open_phases_.Begin(m.phase);
  } else if (m.type == EventType::kPhaseEnd) {
    open_phases_.End(m.phase);
  } else {
    open_phases_.Clear();
  }
  std::string_view now = open_phases_.innermost();
  std::string_view last =
      booking_.phase_changes.empty() ? booking_.booked_phase : booking_.phase_changes.back().second;
  if (now != last) booking_.phase_changes.emplace_back(m.t, std::string(now));
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

void TimeAccount::Book(Spent where, Span span, double seconds) {
  if (seconds <= 0) return;
  booking_.ledger.Add(where, seconds);
  // Each epoch gets the part of the seconds its own time holds.
  double length = span.t1 - span.t0;
  auto inside = [&](double begin, double end) {
    if (length <= 0) return span.t1 > begin && span.t1 <= end ? 1.0 : 0.0;
    return std::clamp((std::min(span.t1, end) - std::max(span.t0, begin)) / length, 0.0, 1.0);
  };
  for (auto& [e, s] : epochs_) {
    double part = inside(s.begin_t, std::numeric_limits<double>::infinity());
    if (part > 0) s.ledger.Add(where, seconds * part);
  }
  for (auto s = done_epochs_.rbegin(); s != done_epochs_.rend() && s->end_t > span.t0; ++s) {
    double part = inside(s->begin_t, s->end_t);
    if (part > 0) s->ledger.Add(where, seconds * part);
  }
}

void TimeAccount::FlushPending(Spent where) {
  for (const PendingRow& p : booking_.pending) Book(where, p.span, p.seconds);
  booking_.pending.clear();
}

void TimeAccount::Account(const Frame& f, const RunState& run, bool stalled, double row_s) {
  std::optional<double> before = ledger_steps_;
  ledger_steps_ = f.steps;
  // The clock went back: the rows waiting are booked now, not an hour later.
  if (!booking_.rows.empty() && f.t < booking_.rows.back().span.t1)
    BookRows(std::numeric_limits<double>::infinity());
  if (row_s > 0) {
    Row& r = booking_.rows.emplace_back();
    r.span = {f.t - row_s, f.t};
    r.phase = f.phase;
    r.held_idle = HeldIdle(f, run.th);
    if (!run.markers) {
      r.kind = Row::Kind::kUnmarked;
    } else if (!run.first_step_t || f.t <= *run.first_step_t) {
      r.kind = Row::Kind::kStartup;  // the first step's row: the first step's time is start-up
    } else if ((f.job_processes && *f.job_processes == 0) || run.clients.empty()) {
      r.kind = Row::Kind::kGone;
    }
    r.advanced = f.steps && before && *f.steps > *before;
    r.stalled = stalled;
    r.wait = std::clamp(f.data_wait_ratio.value_or(0), 0.0, 1.0);
  }
  BookRows(f.t - kMarkHold_s);
}

void TimeAccount::Finish(bool stalled) {
  BookRows(std::numeric_limits<double>::infinity());
  FlushPending(stalled ? Spent::kStalled : Spent::kProductive);
}

TimeLedger TimeAccount::Provisional() const {
  if (booking_.rows.empty()) return booking_.ledger;
  // Without the epochs: their records, one per epoch so far, are the
  // summary's, not the gauges'.
  TimeAccount now;
  now.booking_ = booking_;
  now.BookRows(std::numeric_limits<double>::infinity());
  return now.booking_.ledger;
}

void TimeAccount::BookRows(double until_t) {
  for (; !booking_.rows.empty() && booking_.rows.front().span.t1 <= until_t;
       booking_.rows.pop_front()) {
    BookRow(booking_.rows.front());
  }
}

void TimeAccount::BookRow(const Row& r) {
  SplitByPhase(r);
  double row_s = r.span.t1 - r.span.t0;
  switch (r.kind) {
    case Row::Kind::kUnmarked:
      // Before the first training process spoke: start-up, once one has.
      if (booking_.first_client) {
        Book(Spent::kStartup, r.span, row_s);
      } else {
        Book(r.held_idle ? Spent::kIdleGpu : Spent::kUnattributed, r.span, row_s);
      }
      break;
    case Row::Kind::kStartup:
      Book(Spent::kStartup, r.span, row_s);
      break;
    case Row::Kind::kGone:
      // Steps that did not advance before the processes left: their teardown.
      FlushPending(Spent::kOtherPhases);
      Book(r.held_idle ? Spent::kIdleGpu : Spent::kOtherPhases, r.span, row_s);
      break;
    case Row::Kind::kRunning:
      BookRunning(r);
      break;
  }
}

void TimeAccount::SplitByPhase(const Row& r) {
  segments_.clear();
  if (!booking_.phases_marked) {
    segments_.emplace_back(r.phase, r.span);
    return;
  }
  double from = r.span.t0;
  for (; !booking_.phase_changes.empty() && booking_.phase_changes.front().first <= r.span.t1;
       booking_.phase_changes.pop_front()) {
    auto& [t, phase] = booking_.phase_changes.front();
    double at = std::clamp(t, from, r.span.t1);
    if (at > from) segments_.emplace_back(booking_.booked_phase, Span{from, at});
    from = at;
    booking_.booked_phase = std::move(phase);
  }
  if (r.span.t1 > from) segments_.emplace_back(booking_.booked_phase, Span{from, r.span.t1});
}

void TimeAccount::BookRunning(const Row& r) {
  double train_s = 0;
  for (const auto& [phase, span] : segments_) {
    if (TrainingPhase(phase)) {
      train_s += span.t1 - span.t0;
    } else {
      Book(SpentInPhase(phase), span, span.t1 - span.t0);
    }
  }
  if (train_s > 0) BookTraining(r, train_s);
  // Steps that did not advance before a phase ended were its last long step.
  if (!segments_.empty() && !TrainingPhase(segments_.back().first)) {
    FlushPending(Spent::kProductive);
  }
}

void TimeAccount::BookTraining(const Row& r, double train_s) {
  if (r.stalled && !r.advanced) {
    FlushPending(Spent::kStalled);
    Book(Spent::kStalled, r.span, train_s);
    return;
  }
  if (r.advanced) FlushPending(Spent::kProductive);
  Book(Spent::kDataWait, r.span, train_s * r.wait);
  double computing_s = train_s * (1 - r.wait);
  if (r.advanced) {
    Book(Spent::kProductive, r.span, computing_s);
  } else {
    booking_.pending.push_back({r.span, computing_s});
  }
}

}  // namespace tv

#include "analysis/findings/observer.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tv {

void FindingsObserver::AddTo(RunSummary* summary) const {
  summary->health = analyzer_.Health();
  summary->findings = analyzer_.Findings();
  summary->memory_trends = analyzer_.MemoryTrends();
}

void FindingsObserver::OnSample(const Sample& sample, std::vector<Event>* events) {
  (void)events;
  Mark m;
  for (const TrainingEvent& e : sample.training.events) {
    if (MarkFromTrainingEvent(e, &m)) pending_.push_back(m);
  }
}

void FindingsObserver::FeedMarks(double until_t, std::vector<Event>* events) {
  if (pending_.empty()) return;
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const Mark& a, const Mark& b) { return a.t < b.t; });
  auto end = std::upper_bound(pending_.begin(), pending_.end(), until_t,
                              [](double t, const Mark& m) { return t < m.t; });
  for (auto it = pending_.begin(); it != end; ++it) analyzer_.OnMark(*it, events);
  pending_.erase(pending_.begin(), end);
}

void FindingsObserver::OnRow(Row* row, std::vector<Event>* events) {
  // As samples.jsonl holds it: times to the millisecond.
  Row& r = *row;
  FeedMarks(std::round(r.t * 1000) / 1000 - kMarkHold_s, events);
  FrameFromRow(r, &frame_);
  analyzer_.OnFrame(frame_, events);
  for (const MemoryRisk& risk : analyzer_.TakeRisks()) {
    if (on_risk_) on_risk_(risk);
  }
  for (const auto& [id, subject] : analyzer_.TakeOpened()) {
    if (on_open_) on_open_(id, subject);
  }
  for (FindingId id : analyzer_.TakeProbes()) {
    if (on_probe_) on_probe_(id);
  }
  TimeLedger live = analyzer_.LiveTimeSpent();
  r.health_score = analyzer_.HealthScore(live);
  analyzer_.FindingStates(&r.findings);
  analyzer_.NotJudged(&r.not_judged);
  const TimeLedger& spent = analyzer_.TimeSpent();
  r.time_spent_s.clear();
  for (size_t i = 0; i < kSpentCount; ++i) {
    auto s = static_cast<Spent>(i);
    r.time_spent_s.emplace_back(SpentName(s), spent[s]);
  }
  r.goodput_ratio.reset();
  if (analyzer_.StepsMeasured()) r.goodput_ratio = live.Share(Spent::kProductive);
}

void FindingsObserver::OnFinish(double t, std::vector<Event>* events) {
  FeedMarks(std::numeric_limits<double>::infinity(), events);
  if (job_end_) analyzer_.OnJobEnd(*job_end_);
  // The run ends at its last row, as a replay of samples.jsonl sees it.
  analyzer_.Finish(frame_.t > 0 ? frame_.t : std::round(t * 1000) / 1000, events);
}

}  // namespace tv

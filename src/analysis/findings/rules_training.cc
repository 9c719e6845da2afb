// Rules on what the training processes said: input-bound, stalled,
// slow-start, straggler, eval-heavy.
#include <algorithm>

#include "analysis/findings/analyzer.h"
#include "analysis/findings/format.h"

namespace tv {
namespace {

constexpr size_t kStepTimes = 64;  // step-time estimates kept for the median

double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

void Analyzer::JudgeInput(const Frame& f, std::vector<Event>* events) {
  if (!Training(f) || !f.data_wait_ratio) return;
  Want(FindingId::kInputBound);
  // The window holds the rows after the warm-up; until it is full, the steps
  // judge once they are evidence enough: the mean from the row after the
  // first step's (whose wait is start-up: workers spawning, the first batch).
  if (!first_step_t_ || f.t <= *first_step_t_) return;
  if (f.job_processes && *f.job_processes == 0) return;
  wait_sum_ += *f.data_wait_ratio;
  ++wait_rows_;
  if (Judged(f)) data_wait_.Add(f.t, *f.data_wait_ratio);
  bool full = data_wait_.Full(interval_s_);
  bool evidence = full || StepEvidence(f);
  double wait = full ? *data_wait_.Mean() : wait_sum_ / wait_rows_;
  if (evidence) Judging(FindingId::kInputBound);
  bool cond = evidence && wait >= th_[Th::kInputBoundRatio];
  if (!Due(input_, f.t, cond, th_[Th::kOpen_s], events)) return;
  double over_s =
      full ? std::min(th_[Th::kWindow_s], data_wait_.Covered(interval_s_)) : f.t - *first_step_t_;
  Opening o;
  o.severity = wait >= th_[Th::kInputBoundHighRatio] ? Severity::kWarning : Severity::kInfo;
  o.evidence = {{"data_wait_ratio", Round4(wait)}, {"window_s", Round4(over_s)}};
  if (f.steps) o.evidence["steps"] = *f.steps;
  o.message = fmt::format(
      "The training spent {} of its time waiting for the next batch over the last {}: "
      "{}.",
      Pct(wait), Span(over_s),
      f.gpus.empty() ? "the input pipeline limits the step rate"
                     : "the GPUs wait for the input pipeline");
  Open(FindingId::kInputBound, input_, f.t, nlohmann::ordered_json::object(), std::move(o), events);
}

void Analyzer::JudgeProgress(const Frame& f, std::vector<Event>* events) {
  bool alive = !clients_.empty() && f.job_processes.value_or(1) > 0;
  bool cond =
      markers_ && alive && !first_step_t_ && start_t_ && f.t - *start_t_ >= th_[Th::kSlowStart_s];
  if (Due(slow_start_, f.t, cond, 0, events)) {
    Opening o;
    o.evidence = {{"seconds_without_step", Round4(f.t - *start_t_)}};
    o.message = fmt::format(
        "No training step came in the first {}: start-up (data indexing, downloads, "
        "compilation) takes as long as training would.",
        Span(f.t - *start_t_));
    Open(FindingId::kSlowStart, slow_start_, f.t, nlohmann::ordered_json::object(), std::move(o),
         events);
  }
  bool judge = alive && (Judged(f) || StepEvidence(f));
  if (f.ranks.empty()) {
    // One training process: name it (py-spy needs its pid); several that
    // report no ranks: the job as a whole.
    nlohmann::ordered_json subject = nlohmann::ordered_json::object();
    if (clients_.size() == 1) subject["pid"] = clients_.begin()->first;
    JudgeStep(job_steps_, f.steps, subject, f, judge, events);
    return;
  }
  for (const RankFrame& r : f.ranks) {
    if (!clients_.contains(r.pid)) continue;  // said goodbye: not stalled, gone
    JudgeStep(rank_steps_[r.pid], r.steps, {{"rank", r.rank}, {"pid", r.pid}}, f, judge, events);
  }
}

void Analyzer::JudgeStep(StepState& s, std::optional<double> steps,
                         const nlohmann::ordered_json& subject, const Frame& f, bool judge,
                         std::vector<Event>* events) {
  if (!steps) return;
  if (!s.steps || *steps < *s.steps) {
    s.steps = steps;
    s.last_step_t = f.t;
    return;
  }
  if (*steps > *s.steps) {
    if (*s.steps > 0) {  // the first step's time is start-up, not a step
      double estimate = (f.t - s.last_step_t) / (*steps - *s.steps);
      if (s.step_times_s.size() < kStepTimes) {
        s.step_times_s.push_back(estimate);
      } else {
        s.step_times_s[s.next++ % kStepTimes] = estimate;
      }
    }
    s.steps = steps;
    s.last_step_t = f.t;
  } else if (!judge || !Training(f)) {
    s.last_step_t = f.t;  // evaluation, warm-up: no clock runs for a stall
  }
  double limit = th_[Th::kStalled_s];
  std::optional<double> median;
  if (!s.step_times_s.empty()) {
    median = Median(s.step_times_s);
    limit = std::max(limit, th_[Th::kStalledFactor] * *median);
  }
  double quiet_s = f.t - s.last_step_t;
  Want(FindingId::kStalled);
  if (judge && Training(f) && median) Judging(FindingId::kStalled);
  bool cond = judge && Training(f) && median && quiet_s >= limit;
  if (!Due(s.stalled, f.t, cond, 0, events)) return;
  Opening o;
  o.severity = Severity::kCritical;
  o.evidence = {{"seconds_without_step", Round4(quiet_s)},
                {"median_step_s", Round4(*median)},
                {"steps", *steps}};
  std::string where;
  if (subject.contains("rank")) {
    where = fmt::format(" on rank {}", subject["rank"].get<int>());
  } else if (subject.contains("pid")) {
    where = fmt::format(" in process {}", subject["pid"].get<int>());
  }
  o.message = fmt::format(
      "No training step for {}{} while its process lives (a step takes {:.2g} s): the "
      "training has stopped making progress.",
      Span(quiet_s), where, *median);
  int pid = subject.contains("pid") ? subject["pid"].get<int>() : 0;
  o.advice = StalledAdvice(framework_, pid, clients_.size() > 1 || subject.contains("rank"));
  Open(FindingId::kStalled, s.stalled, f.t, subject, std::move(o), events);
}

void Analyzer::JudgeRanks(const Frame& f, std::vector<Event>* events) {
  if (f.ranks.size() < 2) return;
  Want(FindingId::kStraggler);
  if (!Judged(f) || !Training(f)) return;
  double window = th_[Th::kWindow_s];
  // Per rank over the window: its step rate (ranks that do not wait for each
  // other) and its data-wait share (synchronised ranks step together, so the
  // one that holds the others back is the one that waits for its data).
  std::map<int, double> rates, waits;
  double best = 0;
  for (const RankFrame& r : f.ranks) {
    auto [it, added] = ranks_.try_emplace(r.rank);
    RankState& s = it->second;
    if (added) s.wait.set_window(window);
    if (r.data_wait_ratio) s.wait.Add(f.t, *r.data_wait_ratio);
    if (s.wait.Full(interval_s_)) waits[r.rank] = *s.wait.Mean();
    s.history.emplace_back(f.t, r.steps);
    while (s.history.size() > 1 && s.history[1].first <= f.t - window) s.history.pop_front();
    double span = s.history.back().first - s.history.front().first;
    if (span + interval_s_ < 0.9 * window || span <= 0) continue;
    double rate = (s.history.back().second - s.history.front().second) / span;
    rates[r.rank] = rate;
    best = std::max(best, rate);
  }
  for (auto& [rank, s] : ranks_) {
    std::optional<double> rate;
    if (auto it = rates.find(rank); it != rates.end() && rates.size() >= 2) rate = it->second;
    if (rates.size() >= 2 || waits.size() >= 2) Judging(FindingId::kStraggler);
    std::optional<double> wait, others;
    if (auto it = waits.find(rank); it != waits.end() && waits.size() >= 2) {
      wait = it->second;
      std::vector<double> rest;
      for (const auto& [other, w] : waits) {
        if (other != rank) rest.push_back(w);
      }
      others = Median(rest);
    }
    bool slow = rate && best > 0 && *rate < th_[Th::kStragglerScore] * best;
    bool waiting = wait && *wait - *others >= th_[Th::kStragglerWaitGap];
    if (!Due(s.straggler, f.t, slow || waiting, th_[Th::kOpen_s], events)) continue;
    Opening o;
    o.evidence = {{"window_s", window}};
    if (rate) {
      o.evidence["steps_per_second"] = Round4(*rate);
      o.evidence["fastest_steps_per_second"] = Round4(best);
      if (best > 0) o.evidence["score"] = Round4(*rate / best);
    }
    if (wait) {
      o.evidence["data_wait_ratio"] = Round4(*wait);
      o.evidence["others_data_wait_ratio"] = Round4(*others);
    }
    o.message = slow ? fmt::format(
                           "Rank {} steps at {} of the fastest rank's rate over the last {}: it "
                           "holds the others back.",
                           rank, Pct(*rate / best), Span(window))
                     : fmt::format(
                           "Rank {} waited {} of the last {} for its data, the other ranks {}: "
                           "they wait for it at every step.",
                           rank, Pct(*wait), Span(window), Pct(*others));
    Open(FindingId::kStraggler, s.straggler, f.t, {{"rank", rank}}, std::move(o), events);
  }
}

void Analyzer::EndEpoch(const Mark& m, std::vector<Event>* events) {
  if (!m.epoch) return;
  auto it = epochs_.find(*m.epoch);
  if (it == epochs_.end()) return;
  EpochState s = it->second;
  epochs_.erase(it);
  if (s.eval_since) s.eval_s += m.t - *s.eval_since;
  s.end_t = m.t;
  done_epochs_.emplace_back(*m.epoch, s);
  double epoch_s = m.t - s.begin_t;
  if (epoch_s <= 0) return;
  double share = s.eval_s / epoch_s;
  bool cond = share >= th_[Th::kEvalShare];
  if (!cond) {
    if (eval_.open()) Close(eval_, m.t, events);
    return;
  }
  if (eval_.open()) return;
  Opening o;
  o.severity = share >= th_[Th::kEvalShareHigh] ? Severity::kWarning : Severity::kInfo;
  o.evidence = {{"epoch", *m.epoch},
                {"eval_s", Round4(s.eval_s)},
                {"epoch_s", Round4(epoch_s)},
                {"eval_share", Round4(share)}};
  o.message = fmt::format("Evaluation took {} of epoch {} ({} of {}).", Pct(share), *m.epoch,
                          Span(s.eval_s), Span(epoch_s));
  Open(FindingId::kEvalHeavy, eval_, m.t, nlohmann::ordered_json::object(), std::move(o), events);
}

}  // namespace tv

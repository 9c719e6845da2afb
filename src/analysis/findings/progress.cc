// slow-start and stalled (progress.h).
#include "analysis/findings/progress.h"

#include <algorithm>

#include "analysis/findings/format.h"
#include "analysis/findings/stall_stacks.h"
#include "analysis/findings/window.h"

namespace tv {
namespace {

constexpr size_t kStepTimes = 64;  // step-time estimates kept for the median

}  // namespace

void ProgressRule::OnMark(const Mark& m, RuleContext& cx) {
  if (m.type == EventType::kClientEnd) {
    rank_steps_.erase(m.pid);
    waits_.erase(m.pid);
  }
  if (m.type == EventType::kStacks && m.stacks) AddStacks(m, cx);
}

void ProgressRule::AddStacks(const Mark& m, RuleContext& cx) {
  waits_[m.pid] = Waits{m.rank, *m.stacks};
  // A rank in a collective names the others: each open finding says it again.
  for (auto& [pid, s] : rank_steps_) {
    if (s.stalled.open() && waits_.contains(pid)) Amend(s, pid, cx);
  }
  if (job_steps_.stalled.open()) {
    const FindingRecord& r =
        cx.log().records()[static_cast<size_t>(job_steps_.stalled.record)].record;
    int pid = r.subject.pid.value_or(m.pid);
    if (waits_.contains(pid)) Amend(job_steps_, pid, cx);
  }
}

void ProgressRule::Amend(StepState& s, int pid, RuleContext& cx) {
  const StackWait& w = waits_[pid].wait;
  std::vector<std::pair<int, StackWait>> others;
  for (const auto& [other, o] : waits_) {
    if (other != pid) others.emplace_back(o.rank, o.wait);
  }
  cx.Amend(s.stalled, StackEvidence(w), s.message + StackSentence(w),
           StackAdvice(w, cx.run.framework, pid, others));
}

bool ProgressRule::StalledNow() const {
  if (job_steps_.stalled.true_since) return true;
  return std::any_of(rank_steps_.begin(), rank_steps_.end(),
                     [](const auto& r) { return r.second.stalled.true_since.has_value(); });
}

void ProgressRule::OnFrame(const Frame& f, RuleContext& cx) {
  bool alive = !cx.run.clients.empty() && f.job_processes.value_or(1) > 0;
  bool cond = cx.run.markers && alive && !cx.run.first_step_t && cx.run.start_t &&
              f.t - *cx.run.start_t >= cx.th[Th::kSlowStart_s];
  if (cx.Due(slow_start_, f.t, cond, 0)) {
    Opening o;
    o.evidence = {{"seconds_without_step", Round4(f.t - *cx.run.start_t)}};
    o.message = fmt::format(
        "No training step came in the first {}: start-up (data indexing, downloads, "
        "compilation) takes as long as training would.",
        Span(f.t - *cx.run.start_t));
    cx.Open(FindingId::kSlowStart, slow_start_, f.t, FindingSubject::Job(), std::move(o));
  }
  bool judge = alive && (cx.run.Judged(f) || cx.run.StepEvidence(f));
  if (f.ranks.empty()) {
    // One training process: name it (py-spy needs its pid); several that
    // report no ranks: the job as a whole.
    FindingSubject subject =
        cx.run.clients.size() == 1
            ? FindingSubject::Process(std::nullopt, cx.run.clients.begin()->first)
            : FindingSubject::Job();
    JudgeStep(job_steps_, f.steps, subject, f, judge, cx);
    return;
  }
  for (const RankFrame& r : f.ranks) {
    if (!cx.run.clients.contains(r.pid)) continue;  // said goodbye: not stalled, gone
    JudgeStep(rank_steps_[r.pid], r.steps, FindingSubject::Process(r.rank, r.pid), f, judge, cx);
  }
}

void ProgressRule::JudgeStep(StepState& s, std::optional<double> steps,
                             const FindingSubject& subject, const Frame& f, bool judge,
                             RuleContext& cx) {
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
  } else if (!judge || !cx.run.Training(f)) {
    s.last_step_t = f.t;  // evaluation, warm-up: no clock runs for a stall
  }
  double quiet_s = f.t - s.last_step_t;
  bool measured = !s.step_times_s.empty();
  // The median step time matters only once it has been quiet for the
  // shortest limit: a row without it is found at no cost.
  double limit = cx.th[Th::kStalled_s];
  std::optional<double> median;
  if (measured && quiet_s >= limit) {
    median = UpperMedian(s.step_times_s);
    limit = std::max(limit, cx.th[Th::kStalledFactor] * *median);
  }
  cx.Want(FindingId::kStalled);
  if (judge && cx.run.Training(f) && measured) cx.Judging(FindingId::kStalled);
  bool cond = judge && cx.run.Training(f) && median && quiet_s >= limit;
  if (!cx.Due(s.stalled, f.t, cond, 0)) return;
  Opening o;
  o.severity = Severity::kCritical;
  o.evidence = {{"seconds_without_step", Round4(quiet_s)},
                {"median_step_s", Round4(*median)},
                {"steps", *steps}};
  bool process = subject.kind == FindingSubject::Kind::kProcess;
  std::string where;
  if (process && subject.rank) {
    where = fmt::format(" on rank {}", *subject.rank);
  } else if (process && subject.pid) {
    where = fmt::format(" in process {}", *subject.pid);
  }
  o.message = fmt::format(
      "No training step for {}{} while its process lives (a step takes {:.2g} s): the "
      "training has stopped making progress.",
      Span(quiet_s), where, *median);
  int pid = process ? subject.pid.value_or(0) : 0;
  o.advice = StalledAdvice(cx.run.framework, pid,
                           cx.run.clients.size() > 1 || (process && subject.rank.has_value()));
  s.message = o.message;
  cx.Open(FindingId::kStalled, s.stalled, f.t, subject, std::move(o));
}

}  // namespace tv

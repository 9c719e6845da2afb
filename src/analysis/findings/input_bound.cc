// input-bound (input_bound.h).
#include "analysis/findings/input_bound.h"

#include <algorithm>

#include "analysis/findings/format.h"
#include "analysis/findings/profile_words.h"

namespace tv {

void InputBoundRule::OnFrame(const Frame& f, RuleContext& cx) {
  if (!cx.run.Training(f)) return;
  if (!f.data_wait_ratio) {
    Unmeasured(f, cx);
    return;
  }
  measured_ = true;
  cx.Want(FindingId::kInputBound);
  // The window holds the rows after the warm-up; until it is full, the steps
  // judge once they are evidence enough: the mean from the row after the
  // first step's (whose wait is start-up: workers spawning, the first batch).
  if (!cx.run.first_step_t || f.t <= *cx.run.first_step_t) return;
  if (f.job_processes && *f.job_processes == 0) return;
  wait_sum_ += *f.data_wait_ratio;
  ++wait_rows_;
  if (cx.run.Judged(f)) data_wait_.Add(f.t, *f.data_wait_ratio);
  bool full = data_wait_.Full(cx.run.interval_s);
  bool evidence = full || cx.run.StepEvidence(f);
  double wait = full ? *data_wait_.Mean() : wait_sum_ / wait_rows_;
  if (evidence) cx.Judging(FindingId::kInputBound);
  bool cond = evidence && wait >= cx.th[Th::kInputBoundRatio];
  if (!cx.Due(tracker_, f.t, cond, cx.th[Th::kOpen_s])) return;
  double over_s = full ? std::min(cx.th[Th::kWindow_s], data_wait_.Covered(cx.run.interval_s))
                       : f.t - *cx.run.first_step_t;
  Opening o;
  o.severity = wait >= cx.th[Th::kInputBoundHighRatio] ? Severity::kWarning : Severity::kInfo;
  o.evidence = {{"data_wait_ratio", Round4(wait)}, {"window_s", Round4(over_s)}};
  if (f.steps) o.evidence["steps"] = *f.steps;
  o.message = fmt::format(
      "The training spent {} of its time waiting for the next batch over the last {}: "
      "{}.",
      Pct(wait), Span(over_s),
      f.gpus.empty() ? "the input pipeline limits the step rate"
                     : "the GPUs wait for the input pipeline");
  cx.Open(FindingId::kInputBound, tracker_, f.t, FindingSubject::Job(), std::move(o));
}

void InputBoundRule::Unmeasured(const Frame& f, RuleContext& cx) {
  if (measured_ || traced_ || f.t < next_probe_t_ || !cx.run.markers || !cx.run.first_step_t ||
      f.t <= *cx.run.first_step_t || !cx.run.Judged(f) || !f.job_cpu_util_ratio) {
    return;
  }
  double gpu = 0;  // the busiest GPU the job uses
  for (const GpuFrame& g : f.gpus) {
    if (g.busy && g.job_memory_bytes.value_or(1) > 0) gpu = std::max(gpu, *g.busy);
  }
  // Idle: no GPU the job uses is busy, its CPU is not (of the cores it may
  // use), and not even one of its threads is (the training loop's own: a
  // Python loop is bound by its thread, however many cores the job may use).
  bool idle = *f.job_cpu_util_ratio < cx.th[Th::kCpuBoundCpuRatio] &&
              f.job_cpu_cores.value_or(0) < cx.th[Th::kCpuBoundCpuRatio] &&
              gpu < cx.th[Th::kLowGpuUtilRatio];
  idle_.Add(f.t, idle ? 1 : 0);
  if (!idle_.Full(cx.run.interval_s) && !cx.run.StepEvidence(f)) return;
  if (*idle_.Mean() <= cx.th[Th::kCpuBoundShare]) return;
  // Asked again a window later while no profile came (the budget had no
  // room for it yet, or the processes took none).
  next_probe_t_ = f.t + cx.th[Th::kWindow_s];
  cx.Probe(FindingId::kInputBound);
}

void InputBoundRule::OnMark(const Mark& m, RuleContext& cx) {
  if (m.type != EventType::kProfile || !m.profile || measured_ || tracker_.open()) return;
  traced_ = true;
  const ProfileCapture& p = *m.profile;
  if (!p.figures.data_loader_share || *p.figures.data_loader_share < cx.th[Th::kInputBoundRatio]) {
    return;
  }
  double wait = *p.figures.data_loader_share;
  Opening o;
  o.severity = wait >= cx.th[Th::kInputBoundHighRatio] ? Severity::kWarning : Severity::kInfo;
  o.evidence = ProfileEvidence(FindingId::kInputBound, p);
  o.evidence["data_wait_ratio"] = Round4(wait);
  o.message = fmt::format(
      "Nothing measures this run's wait for its next batch, so a profile did.{} The input "
      "pipeline limits the step rate (the finding lasts to the run's end: nothing measures the "
      "wait after the profile).",
      ProfileSentence(FindingId::kInputBound, p));
  cx.Open(FindingId::kInputBound, tracker_, m.t, FindingSubject::Job(), std::move(o));
}

}  // namespace tv

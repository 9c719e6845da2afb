// input-bound (input_bound.h).
#include "analysis/findings/input_bound.h"

#include <algorithm>

#include "analysis/findings/format.h"

namespace tv {

void InputBoundRule::OnFrame(const Frame& f, RuleContext& cx) {
  if (!cx.run.Training(f) || !f.data_wait_ratio) return;
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

}  // namespace tv

// throughput-drop (throughput_drop.h).
#include "analysis/findings/throughput_drop.h"

#include <vector>

#include "analysis/findings/format.h"

namespace tv {

void ThroughputDropRule::OnFrame(const Frame& f, RuleContext& cx) {
  if (!f.steps) return;
  std::optional<double> rate;
  if (prev_t_ && f.t > *prev_t_ && *f.steps >= *prev_steps_) {
    rate = (*f.steps - *prev_steps_) / (f.t - *prev_t_);
  }
  prev_t_ = f.t;
  prev_steps_ = f.steps;
  if (!rate || !cx.run.Training(f) || !cx.run.Judged(f)) return;
  cx.Want(FindingId::kThroughputDrop);
  double window_s = cx.th[Th::kWindow_s];
  if (*rate > 0) rates_.emplace_back(f.t, *rate);
  while (!rates_.empty() && rates_.front().first <= f.t - window_s) rates_.pop_front();
  if (rates_.empty() ||
      rates_.back().first - rates_.front().first + cx.run.interval_s < 0.9 * window_s) {
    return;  // not a whole window of stepping rows
  }
  cx.Judging(FindingId::kThroughputDrop);
  std::vector<double> values;
  for (const auto& [t, r] : rates_) values.push_back(r);
  double now = Median(std::move(values));
  bool cond = best_ > 0 && now < cx.th[Th::kThroughputDropRatio] * best_;
  if (!cond && now > best_) {
    best_ = now;
    best_t_ = f.t;
  }
  if (!cx.Due(tracker_, f.t, cond, cx.th[Th::kOpen_s])) return;
  Opening o;
  o.severity = Severity::kWarning;
  o.evidence = {{"steps_per_second", Round4(now)},
                {"best_steps_per_second", Round4(best_)},
                {"ratio", Round4(now / best_)},
                {"best_t", Round4(best_t_)},
                {"window_s", Round4(window_s)}};
  o.message = fmt::format(
      "The training's step rate fell to {:.3g} steps/s over the last {}, {} of its best "
      "({:.3g} steps/s, {} earlier).",
      now, Span(window_s), Pct(now / best_), best_, Span(f.t - best_t_));
  cx.Open(FindingId::kThroughputDrop, tracker_, f.t, FindingSubject::Job(), std::move(o));
}

}  // namespace tv

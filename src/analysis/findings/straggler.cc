// straggler (straggler.h).
#include "analysis/findings/straggler.h"

#include <algorithm>
#include <vector>

#include "analysis/findings/format.h"
#include "analysis/findings/window.h"

namespace tv {
void StragglerRule::OnFrame(const Frame& f, RuleContext& cx) {
  if (f.ranks.size() < 2) return;
  cx.Want(FindingId::kStraggler);
  if (!cx.run.Judged(f) || !cx.run.Training(f)) return;
  double window = cx.th[Th::kWindow_s];
  // Per rank over the window: its step rate (ranks that do not wait for each
  // other) and its data-wait share (synchronised ranks step together, so the
  // one that holds the others back is the one that waits for its data).
  std::map<int, double> rates, waits;
  double best = 0;
  for (const RankFrame& r : f.ranks) {
    auto [it, added] = ranks_.try_emplace(r.rank);
    RankState& s = it->second;
    if (added) {
      s.wait.set_window(window);
      s.name = RankWords(r);
    }
    if (r.data_wait_ratio) s.wait.Add(f.t, *r.data_wait_ratio);
    if (s.wait.Full(cx.run.interval_s)) waits[r.rank] = *s.wait.Mean();
    s.history.emplace_back(f.t, r.steps);
    while (s.history.size() > 1 && s.history[1].first <= f.t - window) s.history.pop_front();
    double span = s.history.back().first - s.history.front().first;
    if (span + cx.run.interval_s < 0.9 * window || span <= 0) continue;
    double rate = (s.history.back().second - s.history.front().second) / span;
    rates[r.rank] = rate;
    best = std::max(best, rate);
  }
  // Every rank's wait in order, once: the median of the others' is then found
  // for each rank in log time (the upper middle of the list without it).
  std::vector<double> sorted;
  sorted.reserve(waits.size());
  for (const auto& [rank, w] : waits) sorted.push_back(w);
  std::sort(sorted.begin(), sorted.end());
  for (auto& [rank, s] : ranks_) {
    std::optional<double> rate;
    if (auto it = rates.find(rank); it != rates.end() && rates.size() >= 2) rate = it->second;
    if (rates.size() >= 2 || waits.size() >= 2) cx.Judging(FindingId::kStraggler);
    std::optional<double> wait, others;
    if (auto it = waits.find(rank); it != waits.end() && waits.size() >= 2) {
      wait = it->second;
      // UpperMedian of the others' waits: without this one (at `at`), the
      // upper middle of the n - 1 left is at (n - 1) / 2 of them.
      size_t at = static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), *wait) -
                                      sorted.begin());
      size_t middle = (sorted.size() - 1) / 2;
      others = sorted[at <= middle ? middle + 1 : middle];
    }
    bool slow = rate && best > 0 && *rate < cx.th[Th::kStragglerScore] * best;
    bool waiting = wait && *wait - *others >= cx.th[Th::kStragglerWaitGap];
    if (!cx.Due(s.straggler, f.t, slow || waiting, cx.th[Th::kOpen_s])) continue;
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
                           "{} steps at {} of the fastest rank's rate over the last {}: it "
                           "holds the others back.",
                           s.name, Pct(*rate / best), Span(window))
                     : fmt::format(
                           "{} waited {} of the last {} for its data, the other ranks {}: "
                           "they wait for it at every step.",
                           s.name, Pct(*wait), Span(window), Pct(*others));
    cx.Open(FindingId::kStraggler, s.straggler, f.t, FindingSubject::Process(rank, std::nullopt),
            std::move(o));
  }
}

}  // namespace tv

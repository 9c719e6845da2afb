// host-memory-pressure and swapping (host_memory.h).
#include "analysis/findings/host_memory.h"

#include <cmath>

#include "analysis/findings/format.h"

namespace tv {

void HostMemoryPressureRule::OnFrame(const Frame& f, RuleContext& cx) {
  bool alive = f.job_processes.value_or(1) > 0;
  if (alive && f.job_memory_util_ratio) {
    double ratio = *f.job_memory_util_ratio;
    bool cond = ratio >= cx.th[Th::kHostMemoryRatio];
    if (cx.Due(tracker_, f.t, cond, cx.th[Th::kOpen_s])) {
      Opening o;
      o.severity =
          ratio >= cx.th[Th::kHostMemoryCriticalRatio] ? Severity::kCritical : Severity::kWarning;
      o.evidence = {{"job_memory_util_ratio", Round4(ratio)}};
      o.message = fmt::format(
          "The job uses {} of the memory it may use: the kernel kills it when that is full.",
          Pct(ratio));
      cx.Open(FindingId::kHostMemoryPressure, tracker_, f.t, FindingSubject::Job(), std::move(o));
    }
  }
}

void SwappingRule::OnFrame(const Frame& f, RuleContext& cx) {
  bool alive = f.job_processes.value_or(1) > 0;
  if (alive && f.host_swap_used_bytes) {
    double window = cx.th[Th::kWindow_s];
    swap_.emplace_back(f.t, *f.host_swap_used_bytes);
    while (swap_.size() > 1 && swap_[1].first <= f.t - window) swap_.pop_front();
    double span = swap_.back().first - swap_.front().first;
    bool full = span > 0 && span + cx.run.interval_s >= 0.9 * window;
    double rate = full ? (swap_.back().second - swap_.front().second) / span : 0;
    if (cx.Due(tracker_, f.t, full && rate > cx.th[Th::kSwapBytesPerSecond], cx.th[Th::kOpen_s])) {
      Opening o;
      o.evidence = {{"swap_growth_bytes_per_second", std::round(rate)}, {"window_s", window}};
      o.message = fmt::format("The host's swap grew by {:.0f} MiB/s over the last {}.",
                              rate / (1 << 20), Span(window));
      cx.Open(FindingId::kSwapping, tracker_, f.t, FindingSubject::Job(), std::move(o));
    }
  }
}

}  // namespace tv

#include "sources/data_wait.h"

#include <algorithm>

namespace tv {

WaitReading ReadWait(const StepSlot& slot) {
  // The client clears wait_start_ns before it stores the new wait_ns (release):
  // a reading whose two wait_ns loads agree saw no wait end in between.
  WaitReading r;
  for (int attempt = 0; attempt < 4; ++attempt) {
    uint64_t before = slot.wait_ns.load(std::memory_order_acquire);
    r.wait_start_ns = slot.wait_start_ns.load(std::memory_order_acquire);
    r.flags = slot.wait_flags.load(std::memory_order_relaxed);
    r.wait_ns = slot.wait_ns.load(std::memory_order_acquire);
    if (r.wait_ns == before) break;
  }
  return r;
}

std::optional<double> DataWaitMeter::Update(const WaitReading& r, uint64_t now_ns) {
  if ((r.flags & kWaitMeasured) == 0) {
    Reset();
    return std::nullopt;
  }
  uint64_t total = r.wait_ns;
  if (r.wait_start_ns != 0 && now_ns > r.wait_start_ns) total += now_ns - r.wait_start_ns;
  bool had = have_;
  uint64_t prev_total = total_ns_, prev_now = now_ns_;
  // The total never goes back: one below the previous (a reading that raced a
  // wait's end, missing it) keeps the previous, and the next reading credits
  // only what was not credited yet.
  have_ = true;
  total_ns_ = had ? std::max(total, prev_total) : total;
  now_ns_ = had ? std::max(now_ns, prev_now) : now_ns;
  if (!had || now_ns <= prev_now) return std::nullopt;
  bool waited = total > prev_total;
  if ((r.flags & kWaitTimed) == 0 && !waited) return std::nullopt;
  double waited_ns = waited ? static_cast<double>(total - prev_total) : 0.0;
  return std::clamp(waited_ns / static_cast<double>(now_ns - prev_now), 0.0, 1.0);
}

}  // namespace tv

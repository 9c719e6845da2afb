#include "sources/pss.h"

#include <time.h>

#include <algorithm>
#include <cmath>

namespace tv {

bool PssScheduler::Due(double now_s, bool membership_changed) const {
  if (!ran_) return true;
  double since = now_s - last_round_s_;
  if (membership_changed && (burst_left_s(now_s) > 0 || since >= pacing_.min_spacing_s)) {
    return true;
  }
  if (settle_at_s_ >= 0 && now_s >= settle_at_s_ && burst_left_s(now_s) > 0) return true;
  return since >= spacing_s_;
}

double PssScheduler::burst_left_s(double now_s) const {
  if (!ran_) return burst_s_;
  double refill = std::max(now_s - last_round_s_, 0.0) * pacing_.cpu_budget_ratio;
  return std::min(burst_s_ + refill, pacing_.burst_cpu_s);
}

void PssScheduler::RoundDone(double now_s, double cpu_s, bool after_change, size_t processes) {
  burst_s_ = burst_left_s(now_s) - std::max(cpu_s, 0.0);
  settle_at_s_ = after_change ? now_s + pacing_.settle_after_s : -1;
  ran_ = true;
  last_round_s_ = now_s;
  double spacing = std::max(cpu_s, 0.0) / pacing_.cpu_budget_ratio;
  double periods = std::ceil(static_cast<double>(processes) / pacing_.processes_per_period);
  spacing_s_ =
      std::clamp(spacing, pacing_.min_periodic_s, pacing_.max_periodic_s * std::max(periods, 1.0));
}

double ThreadCpuSeconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace tv

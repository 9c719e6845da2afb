// Where a run's wall time went: productive training steps against start-up,
// data wait, evaluation and other phases, stalls, checkpoints and GPUs held
// idle (a goodput breakdown, after Google's ML Goodput: productive step time
// over the whole time, the rest named). The shares add up to the whole; the
// health score stands on them (health.cc).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "core/time_spent.h"
#include "store/health_record.h"

namespace tv {

// Seconds by category. Not thread-safe.
class TimeLedger {
 public:
  void Add(Spent s, double seconds) { seconds_[static_cast<size_t>(s)] += seconds; }
  // Books the seconds of `from` to `to` instead.
  void Move(Spent from, Spent to) {
    Add(to, (*this)[from]);
    seconds_[static_cast<size_t>(from)] = 0;
  }
  double operator[](Spent s) const { return seconds_[static_cast<size_t>(s)]; }
  double Total() const;
  // Share of the total, 0 without time.
  double Share(Spent s) const;
  // The lost share: data wait, stalls and held idle GPUs.
  double LostShare() const;
  // The record of it: seconds and shares to 4 decimals, whole percents that
  // add up to 100, and the productive share only when `steps_measured`.
  GoodputRecord Record(bool steps_measured) const;

 private:
  std::array<double, kSpentCount> seconds_{};
};

}  // namespace tv

// Where a run's wall time went: productive training steps against start-up,
// data wait, evaluation and other phases, stalls, checkpoints and GPUs held
// idle (a goodput breakdown, after Google's ML Goodput: productive step time
// over the whole time, the rest named). The shares add up to the whole; the
// health score stands on them (health.cc).
#pragma once

#include <array>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/time_spent.h"

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
  // {"wall_s", "productive_ratio" (absent without step markers), "seconds":
  // {category: s}, "ratios": {category: share}} with every category, in order.
  nlohmann::ordered_json Json(bool steps_measured) const;

 private:
  std::array<double, kSpentCount> seconds_{};
};

}  // namespace tv

// Small building blocks of the findings rules: a sliding-window mean and the
// open/close state of one finding's condition.
#pragma once

#include <algorithm>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "analysis/hysteresis.h"

namespace tv {

// The median of `v`, the mean of its two middle values when their count is
// even; 0 when empty.
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}
// The upper of the two middle values when their count is even (`v` not empty):
// a value `v` holds, found in linear time.
inline double UpperMedian(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The mean of the values added over the last `window_s` seconds. Not thread-safe.
// (The alert rules' Window, alerts/window.h, holds the last N rows instead,
// with their max and min: an alert's time window becomes rows at the interval.)
class WindowMean {
 public:
  explicit WindowMean(double window_s = 60) : window_s_(window_s) {}
  void set_window(double window_s) { window_s_ = window_s; }
  void Add(double t, double v) {
    q_.emplace_back(t, v);
    sum_ += v;
    while (!q_.empty() && q_.front().first <= t - window_s_) {
      sum_ -= q_.front().second;
      q_.pop_front();
    }
    if (q_.size() == 1) sum_ = v;  // no drift from long runs of adds and removes
  }
  std::optional<double> Mean() const {
    if (q_.empty()) return std::nullopt;
    return sum_ / static_cast<double>(q_.size());
  }
  // Seconds between the oldest and newest value held, plus one row: how much
  // of the window is filled.
  double Covered(double row_s) const {
    return q_.empty() ? 0 : q_.back().first - q_.front().first + row_s;
  }
  // Whether the window is (nearly) full: it judges a whole window, not a few rows.
  bool Full(double row_s) const { return Covered(row_s) >= 0.9 * window_s_; }
  void Clear() {
    q_.clear();
    sum_ = 0;
  }

 private:
  double window_s_;
  std::deque<std::pair<double, double>> q_;
  double sum_ = 0;
};

// One finding's condition over time (the hysteresis of open_s and hold_s,
// RuleContext::Due) and the finding it opened: `record` indexes the open
// finding in the FindingLog (finding_log.h).
struct Tracker : Hysteresis {
  int record = -1;
  bool open() const { return record >= 0; }
};

}  // namespace tv

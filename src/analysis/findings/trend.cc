#include "analysis/findings/trend.h"

#include <algorithm>
#include <cmath>

namespace tv {

namespace {
// Scratch space reused across calls on a thread: a row allocates nothing.
thread_local std::vector<double> scratch;
}  // namespace

double TheilSenSlope(std::span<const double> x, std::span<const double> y) {
  std::vector<double>& slopes = scratch;
  slopes.clear();
  size_t n = std::min(x.size(), y.size());
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      if (x[j] != x[i]) slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
    }
  }
  if (slopes.empty()) return 0;
  size_t mid = slopes.size() / 2;
  std::nth_element(slopes.begin(), slopes.begin() + static_cast<ptrdiff_t>(mid), slopes.end());
  double upper = slopes[mid];
  if (slopes.size() % 2 == 1) return upper;
  double lower = *std::max_element(slopes.begin(), slopes.begin() + static_cast<ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

double MannKendallRiseP(std::span<const double> y) {
  size_t n = y.size();
  if (n < 3) return 1;
  double s = 0;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) s += (y[j] > y[i]) - (y[j] < y[i]);
  }
  if (s <= 0) return 1;
  std::vector<double>& sorted = scratch;
  sorted.assign(y.begin(), y.end());
  std::sort(sorted.begin(), sorted.end());
  double dn = static_cast<double>(n);
  double var = dn * (dn - 1) * (2 * dn + 5);
  for (size_t i = 0; i < n;) {  // each group of tied values
    size_t j = i;
    while (j < n && sorted[j] == sorted[i]) ++j;
    double t = static_cast<double>(j - i);
    var -= t * (t - 1) * (2 * t + 5);
    i = j;
  }
  var /= 18;
  if (var <= 0) return 1;
  double z = (s - 1) / std::sqrt(var);
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

bool FloorSeries::Add(double t, double value, int64_t unit) {
  bool closed = false;
  if (open_ && open_->unit != unit) {
    floors_.push_back(*open_);
    if (floors_.size() > keep_) floors_.erase(floors_.begin());
    ++closed_;
    open_.reset();
    closed = true;
  }
  if (!open_) {
    open_ = Floor{unit, t, t, value};
  } else {
    open_->end_t = t;
    open_->value = std::min(open_->value, value);
  }
  return closed;
}

FloorTrend TrendOf(const std::vector<Floor>& floors, double fit_below_p, bool per_unit) {
  FloorTrend trend;
  trend.floors = floors.size();
  if (floors.size() < 2) return trend;
  thread_local std::vector<double> t, unit, y;
  t.clear(), unit.clear(), y.clear();
  for (const Floor& f : floors) {
    t.push_back((f.begin_t + f.end_t) / 2);
    unit.push_back(static_cast<double>(f.unit));
    y.push_back(f.value);
  }
  trend.p_value = MannKendallRiseP(y);
  if (trend.p_value >= fit_below_p) return trend;
  trend.fitted = true;
  trend.slope_per_s = TheilSenSlope(t, y);
  if (per_unit) trend.slope_per_unit = TheilSenSlope(unit, y);
  size_t half = floors.size() / 2;
  trend.recent_slope_per_s = TheilSenSlope(std::span(t).subspan(half), std::span(y).subspan(half));
  trend.growth = trend.slope_per_s * (t.back() - t.front());
  return trend;
}

}  // namespace tv

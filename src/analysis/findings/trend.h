// Robust trends of memory figures, for the leak rules: floors (the minimum of
// each epoch, or of each window without epochs), a Theil-Sen slope through
// them, and a Mann-Kendall test of whether they rise. Floors ignore what a
// sawtooth frees again (caches, evaluation buffers); the slope ignores
// outliers; the test asks whether the order is more than chance.
//
// Thread safety: none; pure functions and plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace tv {

// The median of the pairwise slopes (y[j]-y[i])/(x[j]-x[i]), i < j, x[j] > x[i];
// 0 with fewer than two distinct x.
double TheilSenSlope(std::span<const double> x, std::span<const double> y);

// The one-sided p-value of the Mann-Kendall test that `y` (in time order)
// rises: the normal approximation with continuity and tie corrections. 1 for
// fewer than 3 values or no rise.
double MannKendallRiseP(std::span<const double> y);

// The lowest value of one epoch (or window) of rows.
struct Floor {
  int64_t unit = 0;  // the epoch's number, or the window's index
  double begin_t = 0;
  double end_t = 0;
  double value = 0;
};

// Floors of one figure, the newest `keep` closed ones. Not thread-safe.
class FloorSeries {
 public:
  explicit FloorSeries(size_t keep = 24) : keep_(keep) {}
  // A row's value at `t` in `unit`; a new unit closes the open floor. Returns
  // true when a floor closed.
  bool Add(double t, double value, int64_t unit);
  // Starts over (the figure went away, or epochs replaced windows).
  void Clear() { *this = FloorSeries(keep_); }
  const std::vector<Floor>& floors() const { return floors_; }
  size_t closed() const { return closed_; }  // all closed so far, kept or not
  bool empty() const { return closed_ == 0 && !open_; }

 private:
  size_t keep_;
  std::vector<Floor> floors_;  // closed, oldest first
  std::optional<Floor> open_;
  size_t closed_ = 0;
};

// What the floors say. The slopes are fitted only when the test passes
// `fit_below_p` (most figures do not rise: a row stays cheap).
struct FloorTrend {
  size_t floors = 0;
  bool fitted = false;
  double slope_per_s = 0;         // Theil-Sen over the floors' mid times
  double slope_per_unit = 0;      // Theil-Sen over the units (per epoch, with epochs)
  double recent_slope_per_s = 0;  // over the newer half
  double p_value = 1;             // Mann-Kendall, rising
  double growth = 0;              // slope_per_s over the floors' time span
};
// `per_unit`: also the slope per unit (epochs).
FloorTrend TrendOf(const std::vector<Floor>& floors, double fit_below_p, bool per_unit);

}  // namespace tv

// Window: the last N values of one alert instance (NaN: the row had none),
// with their mean, max and min kept up to date in O(1) per row (a running sum,
// monotonic deques for the extremes), so that 50 rules over 10-minute windows
// on 8 GPUs cost microseconds per row. Allocates only in Reset.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "analysis/alerts/rule.h"

namespace tv {

class Window {
 public:
  // Empties it and sets its length (0: no window).
  void Reset(int rows) {
    n_ = rows;
    ring_.assign(static_cast<size_t>(rows), kNaN);
    max_.Reset(rows);
    min_.Reset(rows);
    seen_ = 0;
    sum_ = 0;
    present_ = 0;
  }

  void Push(double v) {
    if (n_ == 0) return;
    size_t slot = static_cast<size_t>(seen_ % static_cast<uint64_t>(n_));
    double old = ring_[slot];
    if (!std::isnan(old)) {
      sum_ -= old;
      --present_;
    }
    ring_[slot] = v;
    if (!std::isnan(v)) {
      sum_ += v;
      ++present_;
      max_.Push(seen_, v, /*keep_larger=*/true);
      min_.Push(seen_, v, /*keep_larger=*/false);
    }
    ++seen_;
    // A running sum drifts: start it afresh once per lap.
    if (slot + 1 == static_cast<size_t>(n_)) Resum();
  }

  // The aggregate over the window; NaN until the window has been covered
  // once, or when none of its rows has a value.
  double Value(Aggregate agg) const {
    if (n_ == 0 || seen_ < static_cast<uint64_t>(n_) || present_ == 0) return kNaN;
    uint64_t oldest = seen_ - static_cast<uint64_t>(n_);
    switch (agg) {
      case Aggregate::kMean:
        return sum_ / present_;
      case Aggregate::kMax:
        return max_.Front(oldest);
      case Aggregate::kMin:
        return min_.Front(oldest);
      case Aggregate::kLast:
        return ring_[static_cast<size_t>((seen_ - 1) % static_cast<uint64_t>(n_))];
    }
    return kNaN;
  }

 private:
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

  // The candidates for the window's extreme, oldest first, in a ring.
  class Extremes {
   public:
    void Reset(int rows) {
      items_.assign(static_cast<size_t>(rows > 0 ? rows : 0), Item{});
      head_ = 0;
      size_ = 0;
    }
    void Push(uint64_t seq, double v, bool keep_larger) {
      size_t cap = items_.size();
      // Drop what left the window, then what `v` outdoes.
      while (size_ > 0 && items_[head_].seq + cap <= seq) Pop(true);
      while (size_ > 0) {
        double back = items_[(head_ + size_ - 1) % cap].value;
        if (keep_larger ? back > v : back < v) break;
        Pop(false);
      }
      items_[(head_ + size_) % cap] = Item{seq, v};
      ++size_;
    }
    // The extreme among the values pushed at `oldest` or later.
    double Front(uint64_t oldest) const {
      size_t cap = items_.size();
      for (size_t i = 0; i < size_; ++i) {
        const Item& it = items_[(head_ + i) % cap];
        if (it.seq >= oldest) return it.value;
      }
      return kNaN;
    }

   private:
    struct Item {
      uint64_t seq = 0;
      double value = 0;
    };
    void Pop(bool front) {
      if (front) head_ = (head_ + 1) % items_.size();
      --size_;
    }
    std::vector<Item> items_;
    size_t head_ = 0;
    size_t size_ = 0;
  };

  void Resum() {
    sum_ = 0;
    for (double v : ring_) {
      if (!std::isnan(v)) sum_ += v;
    }
  }

  int n_ = 0;
  std::vector<double> ring_;
  Extremes max_;
  Extremes min_;
  uint64_t seen_ = 0;
  double sum_ = 0;
  int present_ = 0;
};

}  // namespace tv

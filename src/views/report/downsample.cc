#include "views/report/downsample.h"

#include <cmath>
#include <limits>

namespace tv {

Downsampled Downsample(const std::vector<double>& x,
                       const std::vector<const std::vector<float>*>& ys, size_t buckets) {
  Downsampled out;
  size_t n = x.size();
  out.ys.resize(ys.size());
  if (buckets == 0 || n <= 2 * buckets) {
    out.x = x;
    for (size_t s = 0; s < ys.size(); ++s) out.ys[s] = *ys[s];
    return out;
  }
  constexpr float kNone = std::numeric_limits<float>::quiet_NaN();
  out.x.reserve(2 * buckets);
  for (auto& y : out.ys) y.reserve(2 * buckets);
  for (size_t b = 0; b < buckets; ++b) {
    size_t first = b * n / buckets, last = (b + 1) * n / buckets;  // [first, last)
    out.x.push_back(x[first]);
    out.x.push_back(x[last - 1]);
    for (size_t s = 0; s < ys.size(); ++s) {
      const std::vector<float>& y = *ys[s];
      size_t lo = last, hi = last;
      for (size_t i = first; i < last; ++i) {
        if (std::isnan(y[i])) continue;
        if (lo == last || y[i] < y[lo]) lo = i;
        if (hi == last || y[i] > y[hi]) hi = i;
      }
      if (lo == last) {
        out.ys[s].push_back(kNone);
        out.ys[s].push_back(kNone);
      } else {
        out.ys[s].push_back(y[std::min(lo, hi)]);
        out.ys[s].push_back(y[std::max(lo, hi)]);
      }
    }
  }
  return out;
}

}  // namespace tv

// Min/max downsampling for the report's charts: a long run is cut into
// buckets of consecutive rows, and each bucket keeps, for every series, its
// smallest and its largest value (in the order they occurred), so no peak or
// dip disappears from a chart however long the run. Pure functions.
#pragma once

#include <cstddef>
#include <vector>

namespace tv {

struct Downsampled {
  std::vector<double> x;               // per kept point: the first row's x, then the last row's
  std::vector<std::vector<float>> ys;  // parallel to x; NaN where a bucket has no value
};

// Downsamples the series `ys` (each parallel to `x`) into `buckets` buckets of
// two points each. With at most 2 * `buckets` rows, returns them unchanged.
Downsampled Downsample(const std::vector<double>& x,
                       const std::vector<const std::vector<float>*>& ys, size_t buckets);

}  // namespace tv

// How the analysis rounds the figures it writes into a run's records: to the
// places a reader needs, so that the files stay short and compare as written.
#pragma once

#include <cmath>

namespace tv {

// `v` rounded to 1/scale: RoundTo(0.123456, 1e4) is 0.1235.
inline double RoundTo(double v, double scale) { return std::round(v * scale) / scale; }

}  // namespace tv

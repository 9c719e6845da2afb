// What a Row becomes in TensorBoard: scalar tags and values, and the step they
// are written at. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "core/metrics.h"
#include "core/row.h"
#include "sinks/tfevents/event_encoder.h"

namespace tv {

// Gauges write their interval mean under TensorBoardTag (bytes in MiB, see
// TensorBoardValue) and counters their last value. A few gauges whose peak
// matters between rows (TensorBoardKeepsMax) also write their max as
// "<tag>_max". Absent values are left out.
std::vector<TbScalar> RowScalars(const Row& row);

// The small set of gauges that get a "<tag>_max" in TensorBoard: CPU and GPU
// utilisation, host/job/GPU memory, GPU power (docs/metrics.md).
bool TensorBoardKeepsMax(const MetricDef& m);

// Chooses the step of each row: seconds since start, rounded to a whole number
// of intervals, and always above the previous step (a repeated or smaller step
// makes TensorBoard drop points). Seam: when training-step markers exist, the
// row's training step is to be used here instead.
class TbStepper {
 public:
  explicit TbStepper(double interval_s) : interval_s_(interval_s) {}
  int64_t Next(const Row& row);

 private:
  double interval_s_;
  int64_t last_ = -1;
};

}  // namespace tv

// What a Row becomes in TensorBoard: scalar tags and values, and the step they
// are written at. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
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

// Chooses the step of each row, always above the previous one (a repeated or
// smaller step makes TensorBoard drop points). When the training gives steps
// (markers), the training's global step: the highest step number the processes
// gave (training.step), else the steps taken (training.steps), so the system
// scalars line up with the framework's own curves on TensorBoard's default
// axis; a row where it has not advanced is not written (nullopt). Before the
// first step, and without markers: seconds since start, rounded to a whole
// number of intervals.
class TbStepper {
 public:
  explicit TbStepper(double interval_s) : interval_s_(interval_s) {}
  std::optional<int64_t> Next(const Row& row);

 private:
  double interval_s_;
  int64_t last_ = -1;
};

}  // namespace tv

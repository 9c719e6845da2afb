// Aggregator: reduces Samples into a Row (mean, max and last value of every
// metric in the table). The sampler keeps one per interval and one for the whole
// run. Not thread-safe: used on the sampler thread only.
#pragma once

#include <utility>
#include <vector>

#include "core/row.h"
#include "core/sample.h"

namespace tv {

class Aggregator {
 public:
  Aggregator();
  void Add(const Sample& sample);
  uint32_t samples() const { return samples_; }
  // The row of everything added since the last Take, stamped with `t` and
  // `elapsed_s`; then starts afresh.
  Row Take(double t, double elapsed_s);
  // The row of everything added so far, without resetting.
  Row Peek(double t, double elapsed_s) const;

 private:
  struct GpuAcc {
    int index = 0;
    int physical_index = 0;
    int mig_instance = -1;
    std::vector<StatAccumulator> values;
    GpuProcessList processes;  // of the latest sample
  };
  std::vector<StatAccumulator> values_;
  std::vector<StatAccumulator> cores_;
  std::vector<GpuAcc> gpus_;
  TrainingRow training_;  // of the latest sample
  // Each process's data-wait share over the samples that had it, by pid: a
  // row's ranks carry the interval's mean, not one tick's.
  std::vector<std::pair<int, StatAccumulator>> rank_wait_;
  uint32_t samples_ = 0;
};

}  // namespace tv

// cpu-bound and io-bound (SageMaker's CPUBottleneck and IOBottleneck): a GPU
// the job uses starves while the job's CPUs are saturated, or the CPUs wait
// for storage, in most rows of the window.
#pragma once

#include <optional>

#include "analysis/findings/rule.h"

namespace tv {

class CpuIoBoundRule : public Rule {
 public:
  explicit CpuIoBoundRule(const Thresholds& th)
      : cpu_bound_(th[Th::kWindow_s]),
        io_bound_(th[Th::kWindow_s]),
        cpu_long_(th[Th::kLowGpuUtilWindow_s]) {}
  void OnFrame(const Frame& f, RuleContext& cx) override;
  // The job's mean CPU use over the judged training rows of the last
  // low_gpu_util_window_s (for batch-too-small); nullopt before any.
  std::optional<double> CpuMean() const { return cpu_long_.Mean(); }

 private:
  WindowMean cpu_bound_, io_bound_;  // the share of rows each condition held
  WindowMean cpu_long_;
  Tracker cpu_, io_;
};

}  // namespace tv

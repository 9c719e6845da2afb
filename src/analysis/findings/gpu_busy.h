// The rules on how busy the job's GPUs are (JobHolds: memory on them), over
// the judged training rows: low-gpu-util (over low_gpu_util_window_s),
// batch-too-small (busy in the band under batch_small_ratio with memory and
// CPU to spare, when neither the input nor the CPU explains it) and
// gpu-imbalance (a GPU far behind the busiest of the job's). They read the
// same busy windows of each GPU, and batch-too-small each GPU's imbalance, so
// they are one unit.
#pragma once

#include <map>

#include "analysis/findings/cpu_io_bound.h"
#include "analysis/findings/input_bound.h"
#include "analysis/findings/rule.h"

namespace tv {

class GpuBusyRules : public Rule {
 public:
  // batch-too-small reads the input's and the CPU's windows from these
  // rules, which judge each row before this one.
  GpuBusyRules(const InputBoundRule& input, const CpuIoBoundRule& cpu) : input_(input), cpu_(cpu) {}
  void OnFrame(const Frame& f, RuleContext& cx) override;
  // GPU `index`'s busy share over the judged training rows of the last
  // window_s, this row's included; absent before its first.
  std::optional<double> BusyMean(int index) const {
    auto it = gpus_.find(index);
    return it == gpus_.end() ? std::nullopt : it->second.busy.Mean();
  }

 private:
  struct GpuState {
    WindowMean busy;                    // over window_s
    WindowMean busy_long, memory_long;  // over low_gpu_util_window_s
    Tracker low, small, imbalance;
  };
  void JudgeBusy(GpuState& g, const GpuFrame& gpu, const Frame& f, RuleContext& cx);
  void JudgeBalance(const Frame& f, RuleContext& cx);

  const InputBoundRule& input_;
  const CpuIoBoundRule& cpu_;
  std::map<int, GpuState> gpus_;
};

}  // namespace tv

// The rules on each GPU the job uses: gpu-unused, gpu-idle, low-gpu-util,
// throttled, gpu-memory-near-full, shared-gpu, batch-too-small, and
// gpu-imbalance across them. They read one state per GPU (its busy windows,
// each other's conditions), so they are one unit. A GPU counts as the job's
// when the job holds memory on it (gpus[].job_memory_bytes > 0).
#pragma once

#include <map>
#include <optional>

#include "analysis/findings/cpu_io_bound.h"
#include "analysis/findings/input_bound.h"
#include "analysis/findings/rule.h"

namespace tv {

class GpuRules : public Rule {
 public:
  // batch-too-small reads the input's and the CPU's windows from these
  // rules, which judge each row before this one.
  GpuRules(const InputBoundRule& input, const CpuIoBoundRule& cpu) : input_(input), cpu_(cpu) {}
  void OnFrame(const Frame& f, RuleContext& cx) override;
  // gpu-unused over a whole run shorter than gpu_unused_s.
  void Finish(RuleContext& cx) override;

 private:
  struct GpuState {
    WindowMean busy, busy_long, memory_long, throttle;
    std::optional<double> held_since;  // the job holds memory on it since
    bool ever_busy = false;
    std::optional<double> idle_since;
    // The last judged row the job held it: for gpu-unused over a whole run
    // shorter than gpu_unused_s, judged at the end.
    struct Held {
      double job_memory_bytes, busy_ratio, seconds;
    };
    std::optional<Held> held_judged;
    Tracker idle, unused, low, imbalance, throttled, full, shared, small;
  };
  void JudgeUse(GpuState& g, const GpuFrame& gpu, const Frame& f, RuleContext& cx);
  void JudgeBalance(const Frame& f, RuleContext& cx);

  const InputBoundRule& input_;
  const CpuIoBoundRule& cpu_;
  std::map<int, GpuState> gpus_;
};

}  // namespace tv

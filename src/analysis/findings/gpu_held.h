// gpu-unused and gpu-idle: a GPU the job holds (JobHolds: memory on it) and
// has never computed on, or has let go idle while training (evaluation and
// checkpoints do not count). A run shorter than gpu_unused_s that held a GPU
// it never used through all of its judged rows gets gpu-unused at its end.
#pragma once

#include <map>
#include <optional>

#include "analysis/findings/rule.h"

namespace tv {

class GpuHeldRule : public Rule {
 public:
  void OnFrame(const Frame& f, RuleContext& cx) override;
  void Finish(RuleContext& cx) override;

 private:
  // The last judged row the job held a GPU.
  struct Held {
    double job_memory_bytes, busy_ratio, seconds;
  };
  struct GpuState {
    std::optional<double> held_since;  // the job holds memory on it since
    bool ever_busy = false;
    std::optional<double> idle_since;
    std::optional<Held> held_judged;
    Tracker idle, unused;
  };
  void Judge(GpuState& g, const GpuFrame& gpu, const Frame& f, RuleContext& cx);

  std::map<int, GpuState> gpus_;
};

}  // namespace tv

// The rules on one GPU's own figures, for each GPU the job holds (JobHolds):
// gpu-memory-near-full (the memory the training needs, at the row's peak),
// shared-gpu (processes outside the job on it) and throttled (its clocks held
// down while it works, over the last window).
#pragma once

#include <map>

#include "analysis/findings/gpu_busy.h"
#include "analysis/findings/rule.h"

namespace tv {

class GpuMemoryFullRule : public Rule {
 public:
  void OnFrame(const Frame& f, RuleContext& cx) override;

 private:
  std::map<int, Tracker> full_;  // by GPU index
};

class SharedGpuRule : public Rule {
 public:
  void OnFrame(const Frame& f, RuleContext& cx) override;

 private:
  std::map<int, Tracker> shared_;  // by GPU index
};

class ThrottledRule : public Rule {
 public:
  // Reads each GPU's busy share from the busy rules, which judge each row
  // before this one.
  explicit ThrottledRule(const GpuBusyRules& busy) : busy_(busy) {}
  void OnFrame(const Frame& f, RuleContext& cx) override;

 private:
  struct GpuState {
    WindowMean throttle;  // over the judged training rows of the last window_s
    Tracker throttled;
  };
  const GpuBusyRules& busy_;
  std::map<int, GpuState> gpus_;
};

}  // namespace tv

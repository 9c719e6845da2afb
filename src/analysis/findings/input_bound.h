// input-bound: the training waits for its next batch (the steps' data-wait
// share) for most of a window. When nothing measures the wait (Keras input
// not through the callback's data(), a loop without m.data()), a profile of
// the next steps measures it: the rule asks for one when no compute resource
// (a GPU, the job's cores, its busiest thread) is busy over a window, and a profile whose trace
// shows the wait (any profile: one taken for low-gpu-util too) opens the finding; nothing measures
// the wait after it, so it stays open to the run's end.
#pragma once

#include <optional>

#include "analysis/findings/rule.h"

namespace tv {

class InputBoundRule : public Rule {
 public:
  explicit InputBoundRule(const Thresholds& th)
      : data_wait_(th[Th::kWindow_s]), idle_(th[Th::kWindow_s]) {}
  void OnFrame(const Frame& f, RuleContext& cx) override;
  void OnMark(const Mark& m, RuleContext& cx) override;
  // The mean data-wait share over the window after the warm-up (for
  // batch-too-small); nullopt before any.
  std::optional<double> WaitMean() const { return data_wait_.Mean(); }

 private:
  // A training row whose wait nothing measures: asks for a profile once the
  // job's CPU and GPUs were idle in most rows of a window.
  void Unmeasured(const Frame& f, RuleContext& cx);

  WindowMean data_wait_;
  double wait_sum_ = 0;  // data-wait shares of the training rows since the first step's
  int wait_rows_ = 0;
  Tracker tracker_;
  bool measured_ = false;    // a row measured the wait
  bool traced_ = false;      // a profile came
  double next_probe_t_ = 0;  // no profile is asked for before
  WindowMean idle_;          // 1 for a row with no compute resource busy, else 0
};

}  // namespace tv

// input-bound: the training waits for its next batch (the steps' data-wait
// share) for most of a window.
#pragma once

#include <optional>

#include "analysis/findings/rule.h"

namespace tv {

class InputBoundRule : public Rule {
 public:
  explicit InputBoundRule(const Thresholds& th) : data_wait_(th[Th::kWindow_s]) {}
  void OnFrame(const Frame& f, RuleContext& cx) override;
  // The mean data-wait share over the window after the warm-up (for
  // batch-too-small); nullopt before any.
  std::optional<double> WaitMean() const { return data_wait_.Mean(); }

 private:
  WindowMean data_wait_;
  double wait_sum_ = 0;  // data-wait shares of the training rows since the first step's
  int wait_rows_ = 0;
  Tracker tracker_;
};

}  // namespace tv

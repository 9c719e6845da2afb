// throughput-drop: the training's step rate fell well below the run's own
// best and stayed there: something changed (the input, a neighbour, the
// clocks, the work per step). nvidia-resiliency-ext flags a rank whose median
// step time is below 0.75 of the best rank's; this holds the run against its
// own best window instead. Medians over a window, so an epoch's end, a
// checkpoint or a few slow steps do not count; rows without a step are
// stalled's, not counted, so a job that stopped stepping is no drop.
#pragma once

#include <deque>
#include <optional>
#include <utility>

#include "analysis/findings/rule.h"

namespace tv {

class ThroughputDropRule : public Rule {
 public:
  void OnFrame(const Frame& f, RuleContext& cx) override;

 private:
  std::optional<double> prev_t_;
  std::optional<double> prev_steps_;
  std::deque<std::pair<double, double>> rates_;  // (t, steps/s) of the window's stepping rows
  double best_ = 0;                              // the best window median so far
  double best_t_ = 0;
  Tracker tracker_;
};

}  // namespace tv

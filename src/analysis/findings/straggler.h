// straggler: with several ranks, one steps well below the fastest rank's rate
// over the window, or waits for its data well more than the others.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "analysis/findings/rule.h"

namespace tv {

class StragglerRule : public Rule {
 public:
  void OnFrame(const Frame& f, RuleContext& cx) override;

 private:
  struct RankState {
    std::deque<std::pair<double, double>> history;  // (t, steps) over the window
    WindowMean wait;                                // its data-wait share
    Tracker straggler;
    std::string name;  // RankWords
  };
  std::map<int, RankState> ranks_;  // by rank
};

}  // namespace tv

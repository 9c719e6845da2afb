// eval-heavy: evaluation takes a large share of an epoch, judged at each of
// the lowest rank's epoch ends from its eval phase marks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "analysis/findings/rule.h"

namespace tv {

class EvalHeavyRule : public Rule {
 public:
  void OnMark(const Mark& m, RuleContext& cx) override;
  void OnFrame(const Frame& /*f*/, RuleContext& /*cx*/) override {}

 private:
  struct Epoch {
    double begin_t = 0;
    double eval_s = 0;
    std::optional<double> eval_since;
  };
  void EndEpoch(const Mark& m, RuleContext& cx);

  std::map<int64_t, Epoch> epochs_;  // begun, not ended
  Tracker tracker_;
};

}  // namespace tv

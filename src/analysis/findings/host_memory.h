// host-memory-pressure and swapping: the job near the memory it may use; the
// host's swap growing over the window.
#pragma once

#include <deque>
#include <utility>

#include "analysis/findings/rule.h"

namespace tv {

class HostMemoryPressureRule : public Rule {
 public:
  void OnFrame(const Frame& f, RuleContext& cx) override;

 private:
  Tracker tracker_;
};

class SwappingRule : public Rule {
 public:
  void OnFrame(const Frame& f, RuleContext& cx) override;

 private:
  std::deque<std::pair<double, double>> swap_;  // (t, swap used) over the window
  Tracker tracker_;
};

}  // namespace tv

// The findings rules, in the order they judge each mark and row: their
// findings' events come out in that order, and a rule that reads another's
// state (batch-too-small reads input-bound's and cpu-bound's windows) comes
// after it. Each finding of the table (table.h) is judged by one of them.
#pragma once

#include <memory>
#include <vector>

#include "analysis/findings/memory_rules.h"
#include "analysis/findings/progress.h"
#include "analysis/findings/rule.h"

namespace tv {

struct RuleSet {
  std::vector<std::unique_ptr<Rule>> all;
  const ProgressRule* progress = nullptr;  // stalled now, for the time ledger
  const MemoryRules* memory = nullptr;     // the memory trends
};

RuleSet MakeRules(const Thresholds& th);

}  // namespace tv

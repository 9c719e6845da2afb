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
  std::vector<std::unique_ptr<Rule>> all;   // judging each mark and row, in order
  std::vector<std::unique_ptr<Rule>> held;  // not judging: kept for the others to read
  const ProgressRule* progress = nullptr;   // stalled now, for the time ledger
  const MemoryRules* memory = nullptr;      // the memory trends
};

// Which rules judge: all of them, or only those that compare ranks and GPUs
// (straggler; gpu-imbalance with low-gpu-util and batch-too-small, its
// neighbours), as a job's nodes judged together need (joined.h).
enum class RuleChoice { kAll, kAcrossNodes };

RuleSet MakeRules(const Thresholds& th, RuleChoice choice = RuleChoice::kAll);

}  // namespace tv

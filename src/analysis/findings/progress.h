// slow-start and stalled: no first step long after the start; no step for
// long while the training process lives (per rank with several, else the job).
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "analysis/findings/rule.h"
#include "core/training_sample.h"

namespace tv {

class ProgressRule : public Rule {
 public:
  void OnMark(const Mark& m, RuleContext& cx) override;
  void OnFrame(const Frame& f, RuleContext& cx) override;
  // Whether the job or a rank is stalled now (its condition holds, open or
  // not yet): the time ledger books the row as stalled.
  bool StalledNow() const;

 private:
  struct StepState {  // a process's (or the job's) progress
    std::optional<double> steps;
    double last_step_t = 0;
    std::vector<double> step_times_s;  // recent step-time estimates, a ring
    size_t next = 0;
    Tracker stalled;
    std::string message;  // the stalled finding's, before its stacks came
  };
  // A `stacks` mark: the open stalled findings of the processes whose stacks
  // came say where they wait.
  void AddStacks(const Mark& m, RuleContext& cx);
  void Amend(StepState& s, int pid, RuleContext& cx);
  void JudgeStep(StepState& s, std::optional<double> steps, const FindingSubject& subject,
                 const Frame& f, bool judge, RuleContext& cx);

  Tracker slow_start_;
  StepState job_steps_;
  std::map<int, StepState> rank_steps_;  // by pid
  struct Waits {
    int rank = -1;
    StackWait wait;
  };
  std::map<int, Waits> waits_;  // by pid: the latest stacks of each process
};

}  // namespace tv

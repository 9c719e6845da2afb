#include "analysis/findings/run_state.h"

namespace tv {

bool RunState::Training(const Frame& f) const {
  // Without phase markers every row is training; evaluation, prediction and
  // testing are not (an idle GPU there is no idle run).
  return TrainingPhase(f.phase);
}

bool RunState::StepEvidence(const Frame& f) const {
  if (!first_step_t || !f.steps || !steps_at_first) return false;
  if (f.job_processes && *f.job_processes == 0) return false;
  return *f.steps - *steps_at_first >= th[Th::kJudgeMinSteps] &&
         f.t - *first_step_t >= th[Th::kJudgeMin_s];
}

bool RunState::Judged(const Frame& f) const {
  if (f.job_processes && *f.job_processes == 0) return false;  // the job is gone
  if (markers) return first_step_t && f.t >= *first_step_t + th[Th::kWarmup_s];
  return f.elapsed_s >= th[Th::kWarmup_s];
}

}  // namespace tv

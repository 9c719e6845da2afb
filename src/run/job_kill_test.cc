#include "run/job_kill.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tv::job_kill_test {
namespace {

TEST(JobKill, TheJobTreeWithOrphansButNotTheSupervisorsOwnGroup) {
  // 100 supervises in group 100; 200 is the job (group 200), 201 its worker,
  // 202 a worker that left the group; 300 an orphan re-parented to 100 in a
  // session of its own; 400 an alert keeper (group 100) and 401 its command.
  std::vector<ProcParents> procs = {{100, 1, 100},   {200, 100, 200}, {201, 200, 200},
                                    {202, 201, 202}, {300, 100, 300}, {400, 100, 100},
                                    {401, 400, 401}, {500, 1, 500}};
  std::vector<int> job = JobProcesses(procs, 100, 100);
  std::sort(job.begin(), job.end());
  EXPECT_EQ(job, (std::vector<int>{200, 201, 202, 300}));
}

}  // namespace
}  // namespace tv::job_kill_test

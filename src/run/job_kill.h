// Ending a monitored job by force: SIGKILL to every process of its tree,
// including those that left its process group (setsid) or were re-parented
// to the supervisor (its subreaper) when their parent exited.
//
// The supervisor's own direct children in its own process group (an alert
// action's keeper, and what that keeper runs) are not the job's and are left
// alone. Thread safety: free functions without state.
#pragma once

#include <vector>

namespace tv {

struct ProcParents {
  int pid = 0;
  int ppid = 0;
  int pgrp = 0;
};

// The job's processes among `procs` for a supervisor of pid `self` in process
// group `self_pgrp`: every descendant of `self`, except its children in
// `self_pgrp` and their descendants.
std::vector<int> JobProcesses(const std::vector<ProcParents>& procs, int self, int self_pgrp);

// Sends SIGKILL to process group `job_pgrp` and to every process of the job
// (JobProcesses of this process), a few passes so that what forked meanwhile
// goes too. Returns how many processes were signalled.
int KillJobTree(int job_pgrp);

}  // namespace tv

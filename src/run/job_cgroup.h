// A cgroup of the job's own, for `trainvitals run`: made before the command
// starts, under trainvitals' own cgroup in the unified (v2) hierarchy and the
// v1 cpuacct and memory hierarchies, wherever this process may make one (root,
// a delegated v2 subtree); the command is made in it (v2: clone3's
// CLONE_INTO_CGROUP) or enters it before exec (v1), so only the job's
// processes are ever in it, and it lies under the same limits as before. It
// is removed when the job has ended; one that still holds processes (a daemon
// the job left) stays, and is said. Then those beside it that runs killed
// before their end left go too (SweepStaleJobCgroups).
//
// Entering costs no wait. Moving a process through cgroup.procs write-locks
// the kernel's global threadgroup lock, which waits out an RCU grace period
// (11 to 20 ms here) unless another move came just before; a process made in
// its cgroup, or a thread moving itself through v1's `tasks`, takes no such
// lock. cgroup.procs is the fallback where clone3 cannot place the child.
//
// Its totals are read by sources/cgroup_usage.h. Where none can be made the
// run goes on as before (the job's figures from its processes' files), and
// why_not() says why, once.
//
// Thread safety: not thread-safe. EnterFromChild and unified_bit are
// async-signal-safe (the child calls them between fork and exec).
#pragma once

#include <ctime>
#include <string>
#include <vector>

#include "core/unique_fd.h"
#include "sources/cgroup.h"
#include "sources/cgroup_usage.h"
#include "sources/mountinfo.h"

namespace tv {

// Where the job's cgroups would go: its parent directory in each hierarchy.
struct JobCgroupPlace {
  enum class Kind { kUnified, kCpuacct, kMemory } kind;
  std::string parent;  // this process's cgroup directory in that hierarchy
};
// The hierarchies this process is in, from its mounts and /proc/self/cgroup:
// the unified one, and v1 cpuacct and memory (each at most once).
std::vector<JobCgroupPlace> PlanJobCgroup(const std::vector<MountInfo>& mounts,
                                          const std::vector<ProcCgroupLine>& cgroups);

// Removes from `parent` the job cgroups (`trainvitals-PID`) that runs killed
// before their end (SIGKILL) left: their PID is gone, they were made over a
// minute before `now` (a PID means nothing in another PID namespace sharing
// the parent; a live run's job is in its cgroup from its start to its end, and
// the run removes it at once), and they are empty (rmdir refuses one that
// holds processes: a daemon such a job left). Returns how many went.
int SweepStaleJobCgroups(const std::string& parent, time_t now);

class JobCgroup {
 public:
  // Makes `name` in each place of PlanJobCgroup for this process. Nothing made
  // when there is no place or every mkdir fails (why_not() then says why).
  static JobCgroup Make(const std::string& name);

  JobCgroup() = default;
  JobCgroup(JobCgroup&&) = default;
  JobCgroup& operator=(JobCgroup&&) = default;
  ~JobCgroup();  // Remove()

  // The cgroups the command goes into; bit i of an `entered` mask is the i-th.
  size_t size() const { return made_.size(); }
  // The v2 cgroup's directory, open, for clone3's CLONE_INTO_CGROUP (-1 when
  // none was made), and its bit in `entered`.
  int unified_fd() const { return unified_fd_.get(); }
  unsigned unified_bit() const;
  // Called by the child before exec: enters each cgroup not in `entered` (a
  // child made in the v2 one has its bit) by writing "0", to `tasks` in v1
  // (the child is single-threaded) and to cgroup.procs in v2. Returns the
  // cgroups it is in.
  unsigned EnterFromChild(unsigned entered) const noexcept;
  // Keeps the cgroups the child entered (`entered`: EnterFromChild's bits),
  // removes the others, and says why where it entered none.
  void Entered(unsigned entered);

  // The directories the job is in now (empty when none), or why it has none.
  JobCgroupView view() const;
  // Removes the directories once the job has ended. One that still holds
  // processes stays: the result says which (empty when all went).
  std::string Remove();

 private:
  struct Made {
    JobCgroupPlace::Kind kind;
    std::string dir;
    std::string enter;  // dir + "/tasks" (v1) or "/cgroup.procs" (v2)
  };
  std::vector<Made> made_;
  UniqueFd unified_fd_;
  std::string why_not_;
};

}  // namespace tv

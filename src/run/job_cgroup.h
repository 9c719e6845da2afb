// A cgroup of the job's own, for `trainvitals run`: made before the command
// starts, under trainvitals' own cgroup in the unified (v2) hierarchy and the
// v1 cpuacct and memory hierarchies, wherever this process may make one (root,
// a delegated v2 subtree); the command enters it between fork and exec, so only
// the job's processes are ever in it, and it lies under the same limits as
// before. It is removed when the job has ended; one that still holds processes
// (a daemon the job left) stays, and is said.
//
// Its totals are read by sources/cgroup_usage.h. Where none can be made the
// run goes on as before (the job's figures from its processes' files), and
// why_not() says why, once.
//
// Thread safety: not thread-safe. EnterFromChild is async-signal-safe.
#pragma once

#include <string>
#include <vector>

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

class JobCgroup {
 public:
  // Makes `name` in each place of PlanJobCgroup for this process. Nothing made
  // when there is no place or every mkdir fails (why_not() then says why).
  static JobCgroup Make(const std::string& name);

  JobCgroup() = default;
  JobCgroup(JobCgroup&&) = default;
  JobCgroup& operator=(JobCgroup&&) = default;
  ~JobCgroup();  // Remove()

  // The cgroup.procs files the command writes itself into; the child calls
  // EnterFromChild() between fork and exec and reports which it entered.
  size_t size() const { return made_.size(); }
  // Writes "0" to each cgroup.procs; bit i of the result: the i-th was entered.
  unsigned EnterFromChild() const noexcept;
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
    std::string procs;  // dir + "/cgroup.procs"
  };
  std::vector<Made> made_;
  std::string why_not_;
};

}  // namespace tv

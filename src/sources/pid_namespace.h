// Matching the PIDs a GPU driver reports (host PID namespace) with the job's
// PIDs (as /proc shows them to us). When we share the driver's namespace the
// two agree; when the job runs in a nested PID namespace (a container started
// from our namespace), /proc/<pid>/status lists the process's PID in every
// namespace on its NSpid line, and any of them may be the one in job.pids.
#pragma once

#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/env.h"
#include "sources/proc_pid_parse.h"  // ParseNsPids

namespace tv {

// Caches each driver PID's NSpid list (read once per PID through `env`).
// Not thread-safe.
class PidMapper {
 public:
  explicit PidMapper(Env* env) : env_(env) {}
  // Whether driver PID `pid` is one of `job_pids` (ascending) in any namespace.
  bool InJob(int pid, const std::vector<int>& job_pids);
  // Forgets cached PIDs not in `alive` (call now and then: PIDs get reused).
  void Retain(const std::vector<int>& alive);

 private:
  Env* env_;
  std::unordered_map<int, std::vector<int>> cache_;
  std::string buf_;
};

}  // namespace tv

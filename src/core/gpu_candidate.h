// GpuCandidate: one GPU (or MIG slice) as a survey saw it, plain data that the
// survey (sources/gpu_survey.h) fills and the choice of GPUs
// (analysis/gpu_pick.h) reads, so the analysis never reaches into a source.
#pragma once

#include <optional>
#include <string>

namespace tv {

// One GPU (or MIG slice) as the survey saw it, for `pick` and `run --gpus auto:N`.
struct GpuCandidate {
  int index = 0;          // as NVML numbers the GPU (PCI bus order)
  int mig_instance = -1;  // a MIG slice's GPU instance; -1 for a whole GPU
  std::string uuid;       // "GPU-..." or "MIG-..."
  std::string name;
  std::optional<double> memory_total_bytes;
  std::optional<double> memory_free_bytes;  // the least free over the window
  std::optional<double> busy_ratio;         // the mean over the window
  int processes = 0;                        // compute processes on it
  // Why its lock says another job has it ("held by pid 4242 (python3), lock
  // file of alice", or an unusable lock file); none when it is free.
  std::optional<std::string> held_by;
  std::optional<int> held_by_pid;  // the lock's holder, as the kernel names it
};

}  // namespace tv

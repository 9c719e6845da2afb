// A look at every GPU for `trainvitals pick`: its free memory now, its compute
// processes, and its busy share over the last `window_s` seconds from the
// driver's sample buffer (its history, not one instant; a driver loaded a
// moment ago is given a quarter second). A GPU in MIG mode is surveyed as its
// slices, which are what a job can be given.
#pragma once

#include <optional>
#include <string>
#include <vector>

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

// Empty with *error saying why when no GPU can be read (no library, driver or
// GPU). `nvml_library`: empty for $TRAINVITALS_NVML_LIBRARY, else the driver's.
std::vector<GpuCandidate> SurveyGpus(const std::string& nvml_library, double window_s,
                                     std::string* error);

}  // namespace tv

// `run --gpus auto:N`: the N freest GPUs (as `trainvitals pick` chooses them)
// that no other trainvitals run holds, each held by an advisory lock while the
// job runs, so that runs started at the same moment get different GPUs.
//
// The locks are flock(2) locks on one file per GPU (by UUID) in the checked
// lock directory (run/lock_dir.h), taken as run/gpu_lock.h says. The locks
// are cooperative: a local user can deny a GPU (hold its lock, or put
// something other than a lock file under its name, which makes runs skip it)
// but cannot make a run write, truncate or chmod any file, hang, or name a
// holder the kernel does not.
//
// A lock belongs to its open file, which the job inherits (InheritedFds): it
// stays held while any process of the job lives, even when `run` itself is
// killed with SIGKILL, and the kernel drops it when the last one exits.
#pragma once

#include <string>
#include <vector>

#include "analysis/gpu_pick.h"

namespace tv {

class GpuClaim {
 public:
  // Chooses and locks `count` GPUs. Throws ConfigError saying why when the
  // lock directory is unsafe or fewer than `count` are free (each GPU left out
  // with its reason).
  static GpuClaim Claim(int count, const std::string& nvml_library);
  GpuClaim(GpuClaim&& other) noexcept;
  GpuClaim& operator=(GpuClaim&&) = delete;
  ~GpuClaim();  // closes this process's lock files (the job's copies hold on)

  const std::vector<GpuCandidate>& gpus() const { return gpus_; }
  // For the job: CUDA_VISIBLE_DEVICES's value.
  std::string visible_devices() const { return VisibleDevices(gpus_); }
  // GPUs passed over for a claimed one because their lock file is unusable,
  // each with why ("GPU 0: unusable lock file ...: a FIFO, ...").
  const std::vector<std::string>& skipped() const { return skipped_; }
  // The lock files' descriptors, for the job to inherit across exec.
  const std::vector<int>& inherited_fds() const { return fds_; }

 private:
  GpuClaim() = default;
  std::vector<GpuCandidate> gpus_;
  std::vector<int> fds_;
  std::vector<std::string> skipped_;
};

// Marks in `held_by` each of `gpus` whose lock another process holds, or
// whose lock file is unusable. Makes nothing. Returns what is wrong with the
// lock directory ("" when nothing: a missing directory holds no locks).
std::string MarkHeldGpus(std::vector<GpuCandidate>& gpus);

}  // namespace tv

// `run --gpus auto:N`: the N freest GPUs (as `trainvitals pick` chooses them)
// that no other trainvitals run holds, each held by an advisory lock while the
// job runs, so that runs started at the same moment get different GPUs.
//
// The locks are flock(2) locks on one file per GPU (by UUID) in a directory
// every user of the machine can write: $TRAINVITALS_LOCK_DIR, else
// /tmp/trainvitals-locks (made with the sticky bit, as /tmp is). The kernel
// drops a lock when its holder exits, however it exits: no stale lock
// survives a killed run.
#pragma once

#include <string>
#include <vector>

#include "analysis/gpu_pick.h"

namespace tv {

class GpuClaim {
 public:
  // Chooses and locks `count` GPUs. Throws ConfigError saying why when fewer
  // than `count` are free (each GPU left out with its reason).
  static GpuClaim Claim(int count, const std::string& nvml_library);
  GpuClaim(GpuClaim&& other) noexcept;
  GpuClaim& operator=(GpuClaim&&) = delete;
  ~GpuClaim();  // releases the locks

  const std::vector<GpuCandidate>& gpus() const { return gpus_; }
  // For the job: CUDA_VISIBLE_DEVICES's value.
  std::string visible_devices() const { return VisibleDevices(gpus_); }

 private:
  GpuClaim() = default;
  std::vector<GpuCandidate> gpus_;
  std::vector<int> fds_;
};

// The lock directory (made if missing); "" when it cannot be made.
std::string GpuLockDir();

// Whether another process holds GPU `uuid`'s lock; its pid (as the holder
// wrote it) in *holder when known.
bool GpuLockHeld(const std::string& uuid, int* holder);

}  // namespace tv

#include "run/gpu_claim.h"

#include <fmt/format.h>
#include <unistd.h>

#include "core/config.h"
#include "run/gpu_lock.h"
#include "run/lock_dir.h"
#include "sources/gpu_survey.h"

namespace tv {
namespace {

// How far back the driver's utilisation history is judged, as `pick` does.
constexpr double kWindow_s = 10;

std::string Label(const GpuCandidate& c) {
  return c.mig_instance >= 0 ? fmt::format("GPU {} MIG {} ({})", c.index, c.mig_instance, c.uuid)
                             : fmt::format("GPU {}", c.index);
}

}  // namespace

GpuClaim GpuClaim::Claim(int count, const std::string& nvml_library) {
  std::string error;
  std::vector<GpuCandidate> gpus = SurveyGpus(nvml_library, kWindow_s, &error);
  if (gpus.empty()) throw ConfigError(fmt::format("--gpus auto:{}: {}", count, error));
  std::optional<LockDir> dir = LockDir::Open(true, &error);
  if (!dir) throw ConfigError(fmt::format("--gpus auto:{}: {}", count, error));
  // Every qualifying GPU, the freest first: the next one is tried when another
  // run holds one.
  PickResult ranked = PickGpus(gpus, PickRules{static_cast<int>(gpus.size()), 0, 1.0});
  if (count > 1) {
    std::erase_if(ranked.chosen, [](const GpuCandidate& c) { return c.mig_instance >= 0; });
  }
  GpuClaim claim;
  std::vector<std::string> not_free;
  for (GpuCandidate& c : ranked.chosen) {
    if (static_cast<int>(claim.gpus_.size()) == count) break;
    GpuLockState lock = TakeGpuLock(*dir, c.uuid);
    if (lock.kind != GpuLockState::Kind::kLocked) {
      std::string why = fmt::format("{} {}", Label(c), lock.reason);
      if (lock.kind == GpuLockState::Kind::kUnusable) claim.skipped_.push_back(why);
      not_free.push_back(std::move(why));
      continue;
    }
    claim.fds_.push_back(lock.fd);
    claim.gpus_.push_back(std::move(c));
  }
  if (static_cast<int>(claim.gpus_.size()) < count) {
    throw ConfigError(
        fmt::format("--gpus auto:{}: only {} GPU{} free{}", count, claim.gpus_.size(),
                    claim.gpus_.size() == 1 ? "" : "s",
                    not_free.empty() ? "" : fmt::format(": {}", fmt::join(not_free, "; "))));
  }
  return claim;
}

GpuClaim::GpuClaim(GpuClaim&& other) noexcept
    : gpus_(std::move(other.gpus_)),
      fds_(std::move(other.fds_)),
      skipped_(std::move(other.skipped_)) {
  other.fds_.clear();
}

GpuClaim::~GpuClaim() {
  for (int fd : fds_) ::close(fd);
}

std::string MarkHeldGpus(std::vector<GpuCandidate>& gpus) {
  std::string error;
  std::optional<LockDir> dir = LockDir::Open(false, &error);
  if (!dir) return error;
  for (GpuCandidate& c : gpus) {
    GpuLockState lock = ProbeGpuLock(*dir, c.uuid);
    if (lock.kind == GpuLockState::Kind::kFree) continue;
    c.held_by = lock.reason;
    c.held_by_pid = lock.holder_pid;
  }
  return "";
}

}  // namespace tv

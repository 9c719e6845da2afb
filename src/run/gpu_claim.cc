#include "run/gpu_claim.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/config.h"
#include "sources/gpu_survey.h"

namespace tv {
namespace {

// How far back the driver's utilisation history is judged, as `pick` does.
constexpr double kWindow_s = 10;

std::string LockPath(const std::string& dir, const std::string& uuid) {
  std::string name;
  for (char c : uuid) name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  return fmt::format("{}/gpu-{}.lock", dir, name);
}

// Opens `path` for a lock, readable and writable by every user.
int OpenLock(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd >= 0) ::fchmod(fd, 0666);  // past the umask; fails harmlessly on another's file
  return fd;
}

}  // namespace

std::string GpuLockDir() {
  const char* given = std::getenv("TRAINVITALS_LOCK_DIR");
  std::string dir = given != nullptr && *given != 0 ? given : "/tmp/trainvitals-locks";
  if (::mkdir(dir.c_str(), 01777) == 0) {
    ::chmod(dir.c_str(), 01777);  // past the umask
  } else if (errno != EEXIST) {
    return "";
  }
  return dir;
}

bool GpuLockHeld(const std::string& uuid, int* holder) {
  std::string dir = GpuLockDir();
  if (dir.empty()) return false;
  int fd = ::open(LockPath(dir, uuid).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  if (held && holder != nullptr) {
    char text[32] = {};
    ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
    *holder = n > 0 ? std::atoi(text) : 0;
  }
  ::close(fd);
  return held;
}

GpuClaim GpuClaim::Claim(int count, const std::string& nvml_library) {
  std::string error;
  std::vector<GpuCandidate> gpus = SurveyGpus(nvml_library, kWindow_s, &error);
  if (gpus.empty()) throw ConfigError(fmt::format("--gpus auto:{}: {}", count, error));
  std::string dir = GpuLockDir();
  if (dir.empty()) {
    throw ConfigError(fmt::format("--gpus auto:{}: cannot make the lock directory: {}", count,
                                  std::strerror(errno)));
  }
  // Every qualifying GPU, the freest first: the next one is tried when another
  // run holds one.
  PickResult ranked = PickGpus(gpus, PickRules{static_cast<int>(gpus.size()), 0, 1.0});
  if (count > 1) {
    std::erase_if(ranked.chosen, [](const GpuCandidate& c) { return c.mig_instance >= 0; });
  }
  GpuClaim claim;
  std::vector<std::string> held;
  for (GpuCandidate& c : ranked.chosen) {
    if (static_cast<int>(claim.gpus_.size()) == count) break;
    int fd = OpenLock(LockPath(dir, c.uuid));
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int holder = 0;
      char text[32] = {};
      if (::pread(fd, text, sizeof(text) - 1, 0) > 0) holder = std::atoi(text);
      held.push_back(holder > 0 ? fmt::format("GPU {} (trainvitals pid {})", c.index, holder)
                                : fmt::format("GPU {}", c.index));
      ::close(fd);
      continue;
    }
    std::string pid = fmt::format("{}\n", ::getpid());
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
      // The holder's pid is only for messages: the lock itself holds.
    }
    claim.fds_.push_back(fd);
    claim.gpus_.push_back(std::move(c));
  }
  if (static_cast<int>(claim.gpus_.size()) < count) {
    throw ConfigError(fmt::format(
        "--gpus auto:{}: only {} GPU{} free{}", count, claim.gpus_.size(),
        claim.gpus_.size() == 1 ? "" : "s",
        held.empty() ? "" : fmt::format("; held by other runs: {}", fmt::join(held, ", "))));
  }
  return claim;
}

GpuClaim::GpuClaim(GpuClaim&& other) noexcept
    : gpus_(std::move(other.gpus_)), fds_(std::move(other.fds_)) {
  other.fds_.clear();
}

GpuClaim::~GpuClaim() {
  for (int fd : fds_) ::close(fd);  // closing drops the lock
}

}  // namespace tv

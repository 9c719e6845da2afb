#include "run/gpu_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/escape.h"
#include "core/run_file.h"
#include "run/proc_locks.h"

namespace tv {
namespace {

using LockKind = GpuLockState::Kind;

constexpr int kOpenFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

GpuLockState Unusable(const LockDir& dir, const std::string& name, const std::string& why) {
  return {LockKind::kUnusable, -1,
          fmt::format("unusable lock file {}/{}: {}", dir.path(), name, why), std::nullopt};
}

// Why the open file of status `st` is not a lock file; empty when it is one.
std::string NotALockFile(const struct stat& st) {
  if (!S_ISREG(st.st_mode)) {
    return fmt::format("{}, not a regular file, owned by {}", FileKindName(st.st_mode),
                       UserName(st.st_uid));
  }
  if (st.st_nlink != 1) {
    return fmt::format("has {} hard links, owned by {}", st.st_nlink, UserName(st.st_uid));
  }
  return "";
}

// Why `name` could not be opened, in words: a symbolic link names its target.
std::string OpenFailure(const LockDir& dir, const std::string& name, int err) {
  if (err == ELOOP) {
    char target[512];
    ssize_t n = ::readlinkat(dir.fd(), name.c_str(), target, sizeof(target) - 1);
    struct stat st {};
    std::string owner = ::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0
                            ? UserName(st.st_uid)
                            : "?";
    return fmt::format("a symbolic link{}, owned by {}; never followed",
                       n > 0 ? fmt::format(" to {}", std::string_view(target, n)) : "", owner);
  }
  return std::strerror(err);
}

std::string CommandOf(int pid) {
  std::ifstream in(fmt::format("/proc/{}/comm", pid));
  std::string comm;
  std::getline(in, comm);
  return comm;
}

GpuLockState Held(const struct stat& st) {
  LockHolder holder;
  holder.file_owner = UserName(st.st_uid);
  holder.pid =
      FlockHolder(ParseProcLocks(ReadProcLocks()), major(st.st_dev), minor(st.st_dev), st.st_ino);
  if (holder.pid) holder.command = CommandOf(*holder.pid);
  return {LockKind::kHeld, -1, DescribeHolder(holder), holder.pid};
}

// Opens `name` as a lock file: an existing one, else (with `create`) a new one.
// *created says which; -1 with *state set when it cannot be used (kFree when it
// does not exist and `create` is false).
int OpenLockFile(const LockDir& dir, const std::string& name, bool create, bool* created,
                 GpuLockState* state) {
  *created = false;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (create) {
      int fd = ::openat(dir.fd(), name.c_str(), kOpenFlags | O_CREAT | O_EXCL, 0644);
      if (fd >= 0) {
        *created = true;
        ::fchmod(fd, 0644);  // past the umask: every user may open it to lock it
        return fd;
      }
      if (errno != EEXIST) {
        *state = Unusable(dir, name, fmt::format("cannot be made: {}", std::strerror(errno)));
        return -1;
      }
    }
    int fd = ::openat(dir.fd(), name.c_str(), kOpenFlags);
    if (fd >= 0) return fd;
    if (errno == ENOENT && create) continue;  // removed meanwhile: make it
    if (errno == ENOENT) {
      *state = GpuLockState{};
      return -1;
    }
    *state = Unusable(dir, name, OpenFailure(dir, name, errno));
    return -1;
  }
  *state = Unusable(dir, name, "keeps disappearing");
  return -1;
}

// Whether `name` in `dir` still is the open file of status `st`.
bool StillNamed(const LockDir& dir, const std::string& name, const struct stat& st) {
  struct stat now {};
  return ::fstatat(dir.fd(), name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
         now.st_dev == st.st_dev && now.st_ino == st.st_ino;
}

}  // namespace

std::string DescribeHolder(const LockHolder& holder) {
  std::string who;
  if (!holder.pid) {
    who = "held by a process the kernel does not name";
  } else if (holder.command.empty()) {
    who = fmt::format("held by processes that inherited it from pid {} (exited)", *holder.pid);
  } else {
    who = fmt::format("held by pid {} ({})", *holder.pid, VisibleText(holder.command));
  }
  return fmt::format("{}, lock file of {}", who, holder.file_owner);
}

std::string GpuLockName(const std::string& uuid) {
  std::string name = "gpu-";
  for (char c : uuid) name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  return name + ".lock";
}

GpuLockState TakeGpuLock(const LockDir& dir, const std::string& uuid) {
  std::string name = GpuLockName(uuid);
  // A second try when the name was replaced between the open and the lock.
  for (int attempt = 0; attempt < 2; ++attempt) {
    GpuLockState state;
    bool created = false;
    int fd = OpenLockFile(dir, name, true, &created, &state);
    if (fd < 0) return state;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      state = Unusable(dir, name, std::strerror(errno));
      ::close(fd);
      return state;
    }
    if (std::string why = NotALockFile(st); !why.empty()) {
      ::close(fd);
      return Unusable(dir, name, why);
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      state = err == EWOULDBLOCK
                  ? Held(st)
                  : Unusable(dir, name, fmt::format("flock: {}", std::strerror(err)));
      ::close(fd);
      return state;
    }
    if (StillNamed(dir, name, st)) return {LockKind::kLocked, fd, "", std::nullopt};
    ::close(fd);
  }
  return Unusable(dir, name, "replaced while it was being locked, twice");
}

GpuLockState ProbeGpuLock(const LockDir& dir, const std::string& uuid) {
  std::string name = GpuLockName(uuid);
  GpuLockState state;
  bool created = false;
  int fd = OpenLockFile(dir, name, false, &created, &state);
  if (fd < 0) return state;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    state = Unusable(dir, name, std::strerror(errno));
  } else if (std::string why = NotALockFile(st); !why.empty()) {
    state = Unusable(dir, name, why);
  } else if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    state = errno == EWOULDBLOCK ? Held(st) : GpuLockState{};
  }
  ::close(fd);  // drops the shared lock, if taken
  return state;
}

}  // namespace tv

// One GPU's lock file in the lock directory (run/lock_dir.h): an flock(2)
// advisory lock on gpu-<UUID>.lock, cooperative between trainvitals runs.
//
// Nothing here can be turned against the caller, root included, by a user
// who plants a file in the shared directory: lock files are opened relative
// to the checked directory's descriptor, never through a symbolic link
// (O_NOFOLLOW), never blocking (O_NONBLOCK: a FIFO answers at once), never as
// a controlling terminal; only a regular file with one link is used; and the
// caller never writes, truncates or changes the mode of a file it did not
// create. Who holds a lock is what the kernel says (/proc/locks, the file's
// owner), never what the file contains.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "run/lock_dir.h"

namespace tv {

// Who holds a lock, as the kernel tells it.
struct LockHolder {
  std::string file_owner;  // the lock file's owner (user name)
  std::optional<int> pid;  // the process that took the lock (/proc/locks)
  std::string command;     // its command name; empty when it has exited
};

// "held by pid 4242 (python3), lock file of alice"; a pid whose process has
// exited is said so (processes that inherited its open file hold the lock).
std::string DescribeHolder(const LockHolder& holder);

struct GpuLockState {
  enum class Kind {
    kFree,      // no lock file, or nobody holds it
    kLocked,    // TakeGpuLock: `fd` holds the lock
    kHeld,      // another open file holds it
    kUnusable,  // the name is not a lock file this process may use
  };
  Kind kind = Kind::kFree;
  int fd = -1;                    // kLocked: the caller owns and closes it
  std::string reason;             // kHeld, kUnusable: why, in words
  std::optional<int> holder_pid;  // kHeld: as in LockHolder
};

// The lock file's name for GPU `uuid` (other characters than letters, digits
// and '-' become '_').
std::string GpuLockName(const std::string& uuid);

// Takes GPU `uuid`'s lock without waiting, making its file (mode 0644) when
// there is none.
GpuLockState TakeGpuLock(const LockDir& dir, const std::string& uuid);

// Whether GPU `uuid`'s lock is held, taking nothing (kFree, kHeld or kUnusable).
GpuLockState ProbeGpuLock(const LockDir& dir, const std::string& uuid);

}  // namespace tv

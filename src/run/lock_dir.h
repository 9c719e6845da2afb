// The directory of the GPU lock files, shared by every user of the machine:
// $TRAINVITALS_LOCK_DIR, else /tmp/trainvitals-locks.
//
// It is trusted only when the kernel says it is safe: a real directory (never
// followed through a symbolic link), owned by root or by the calling user, and
// either sticky and writable by all (mode 01777, as /tmp: nobody removes
// another's file) or writable by nobody else. The directory is opened once and
// checked on its open descriptor, and lock files are opened relative to that
// descriptor, so the path cannot be swapped between the check and the use.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>

namespace tv {

// $TRAINVITALS_LOCK_DIR, else /tmp/trainvitals-locks.
std::string LockDirPath();

// What makes a directory of status `st` unsafe for locks of a process of
// effective uid `euid`, in words ("is owned by uid 1001 (alice), not by root
// or you"); empty when it is safe.
std::string LockDirProblem(const struct stat& st, uid_t euid);

class LockDir {
 public:
  // Opens and checks the lock directory. `create`: make it (mode 01777) when
  // it does not exist. None, with `*error` saying what is wrong and how an
  // admin fixes it, when it is unsafe or cannot be opened; none with `*error`
  // empty when it does not exist and `create` is false.
  static std::optional<LockDir> Open(bool create, std::string* error);

  LockDir(LockDir&& other) noexcept : fd_(other.fd_), path_(std::move(other.path_)) {
    other.fd_ = -1;
  }
  LockDir& operator=(LockDir&&) = delete;
  ~LockDir();

  int fd() const { return fd_; }  // O_DIRECTORY, for openat
  const std::string& path() const { return path_; }

 private:
  LockDir(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// The user name of `uid`, else "uid N".
std::string UserName(uid_t uid);

}  // namespace tv

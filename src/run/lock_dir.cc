#include "run/lock_dir.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/host.h"
#include "core/run_file.h"

namespace tv {
namespace {

std::string Remedy(const std::string& path) {
  return fmt::format(
      "an admin fixes it with `rm -rf {0} && install -d -m 1777 -o root -g root {0}` (or "
      "deploy/systemd/trainvitals-locks.conf at boot), or set TRAINVITALS_LOCK_DIR to a "
      "directory of your own",
      path);
}

}  // namespace

std::string LockDirPath() {
  const char* given = std::getenv("TRAINVITALS_LOCK_DIR");
  return given != nullptr && *given != 0 ? given : "/tmp/trainvitals-locks";
}

std::string UserName(uid_t uid) { return UserNameOf(uid).value_or(fmt::format("uid {}", uid)); }

std::string LockDirProblem(const struct stat& st, uid_t euid) {
  if (!S_ISDIR(st.st_mode)) return fmt::format("is {}, not a directory", FileKindName(st.st_mode));
  if (st.st_uid != 0 && st.st_uid != euid) {
    return fmt::format("is owned by {}, not by root or you: its owner can remove the locks in it",
                       UserName(st.st_uid));
  }
  mode_t mode = st.st_mode & 07777;
  bool shared_sticky = (mode & 01777) == 01777;
  bool private_dir = (mode & 022) == 0;
  if (!shared_sticky && !private_dir) {
    return fmt::format(
        "has mode {:04o}: writable by others without the sticky bit (1777), so anyone can "
        "remove or replace the locks in it",
        mode);
  }
  return "";
}

std::optional<LockDir> LockDir::Open(bool create, std::string* error) {
  error->clear();
  std::string path = LockDirPath();
  bool made = false;
  if (create) {
    if (::mkdir(path.c_str(), 01777) == 0) {
      made = true;
    } else if (errno != EEXIST) {
      *error = fmt::format("cannot make the lock directory {}: {}; {}", path, std::strerror(errno),
                           Remedy(path));
      return std::nullopt;
    }
  }
  // What the name is, for the message; the descriptor's status below decides.
  struct stat named {};
  if (::lstat(path.c_str(), &named) != 0) {
    if (errno == ENOENT && !create) return std::nullopt;
    *error = fmt::format("cannot read the lock directory {}: {}", path, std::strerror(errno));
    return std::nullopt;
  }
  if (S_ISLNK(named.st_mode)) {
    *error = fmt::format("the lock directory {} is a symbolic link; {}", path, Remedy(path));
    return std::nullopt;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    *error =
        fmt::format("the lock directory {} cannot be opened: {}; {}", path,
                    err == ENOTDIR || err == ELOOP ? "it is not a directory" : std::strerror(err),
                    Remedy(path));
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *error = fmt::format("cannot read the lock directory {}: {}", path, std::strerror(errno));
    ::close(fd);
    return std::nullopt;
  }
  // Past the umask, on the directory this call made (and nobody else could
  // have replaced: only its owner or root can remove it from a sticky /tmp).
  if (made && st.st_uid == ::geteuid() && (st.st_mode & 07777) != 01777 &&
      ::fchmod(fd, 01777) == 0) {
    st.st_mode = (st.st_mode & ~07777) | 01777;
  }
  if (std::string problem = LockDirProblem(st, ::geteuid()); !problem.empty()) {
    *error = fmt::format("the lock directory {} {}; {}", path, problem, Remedy(path));
    ::close(fd);
    return std::nullopt;
  }
  return LockDir(fd, std::move(path));
}

LockDir::~LockDir() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace tv

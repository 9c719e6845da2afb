#include "core/private_path.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

namespace tv {

Status MakeDirs(const std::string& dir, mode_t mode) {
  std::filesystem::path target = std::filesystem::path(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();  // "a/b/"
  if (target.empty()) return Status::Ok();
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    return S_ISDIR(st.st_mode) ? Status::Ok() : ErrnoStatus(target.string(), ENOTDIR);
  }
  if (std::filesystem::path parent = target.parent_path(); parent != target && !parent.empty()) {
    if (Status s = MakeDirs(parent.string(), mode); !s.ok()) return s;
  }
  if (::mkdir(target.c_str(), mode) != 0 && errno != EEXIST) {
    return ErrnoStatus(target.string(), errno);
  }
  return Status::Ok();
}

Status PrivateDir(const std::string& dir, bool create) {
  if (create && ::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoStatus(dir, errno);
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return ErrnoStatus(dir, errno);
  if (!S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077) != 0) {
    return Status::PermissionDenied(
        dir + ": not a directory private to this user (mode 0700, owned by uid " +
        std::to_string(::getuid()) + ")");
  }
  return Status::Ok();
}

Status CreateFileIfAbsent(const std::string& path, mode_t mode, bool* created) {
  *created = false;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return errno == EEXIST ? Status::Ok() : ErrnoStatus(path, errno);
  ::close(fd);
  *created = true;
  return Status::Ok();
}

Status NarrowMode(const std::string& path, mode_t mode) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ELOOP ? Status::Ok() : ErrnoStatus(path, errno);
  struct stat st {};
  Status result;
  if (::fstat(fd, &st) != 0) {
    result = ErrnoStatus(path, errno);
  } else if (st.st_uid == ::geteuid() && (st.st_mode & 07777 & ~mode) != 0) {
    if (::fchmod(fd, st.st_mode & 07777 & mode) != 0) result = ErrnoStatus(path, errno);
  }
  ::close(fd);
  return result;
}

std::string MemoryRuntimeDir() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  struct stat st {};
  if (runtime != nullptr && runtime[0] == '/' && ::stat(runtime, &st) == 0 && S_ISDIR(st.st_mode) &&
      st.st_uid == ::getuid()) {
    return std::string(runtime) + "/trainvitals";
  }
  struct statfs fs {};
  if (::statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
    return "/dev/shm/trainvitals-" + std::to_string(::getuid());
  }
  return "";
}

}  // namespace tv

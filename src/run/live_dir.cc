#include "run/live_dir.h"

#include <fmt/format.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdlib>

#include "core/private_path.h"

namespace tv {
namespace {

// `path` as a directory private to this user, made (mode 0700) when `create`.
bool Private(const std::string& path, bool create, std::string* error) {
  Status s = PrivateDir(path, create);
  if (!s.ok()) *error = s.message();
  return s.ok();
}

// Without a runtime directory: /dev/shm where it is a memory file system, else
// /tmp. Each session replaces its file at every row, which on a disk's file
// system costs an inode and a journal entry each time (110 us of CPU against
// 17 on tmpfs, measured here), and outlives nothing: the files end with their
// sessions.
std::string FallbackBase() {
  struct statfs fs {};
  const char* root =
      ::statfs("/dev/shm", &fs) == 0 && fs.f_type == TMPFS_MAGIC ? "/dev/shm" : "/tmp";
  return fmt::format("{}/trainvitals-{}", root, ::getuid());
}

}  // namespace

std::string LiveSessionsDir(bool create, std::string* error) {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  std::string base;
  struct stat st {};
  if (runtime != nullptr && runtime[0] == '/' && ::stat(runtime, &st) == 0 && S_ISDIR(st.st_mode) &&
      st.st_uid == ::getuid()) {
    base = std::string(runtime) + "/trainvitals";
  } else {
    base = FallbackBase();
  }
  std::string dir = base + "/sessions";
  if (!Private(base, create, error) || !Private(dir, create, error)) return "";
  return dir;
}

}  // namespace tv

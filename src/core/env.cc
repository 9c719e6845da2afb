#include "core/env.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace tv {

Env* Env::Default() {
  static PosixEnv env;
  return &env;
}

Status PosixEnv::ReadFile(const char* path, std::string* out) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(path, errno);
  out->clear();
  // /proc files report size 0, so read in chunks until EOF into the reused buffer.
  size_t used = 0;
  if (out->capacity() < 4096) out->reserve(4096);
  for (;;) {
    out->resize(out->capacity());
    ssize_t n = ::read(fd, out->data() + used, out->size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      out->clear();
      return ErrnoStatus(path, err);
    }
    used += static_cast<size_t>(n);
    if (n == 0) break;
    if (used == out->size()) out->reserve(out->size() * 2);
  }
  out->resize(used);
  ::close(fd);
  return Status::Ok();
}

Status PosixEnv::ListDir(const char* path, std::vector<std::string>* names) {
  names->clear();
  DIR* dir = ::opendir(path);
  if (dir == nullptr) return ErrnoStatus(path, errno);
  while (dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names->emplace_back(name);
  }
  ::closedir(dir);
  return Status::Ok();
}

Status MemEnv::ReadFile(const char* path, std::string* out) {
  if (std::find(denied_.begin(), denied_.end(), path) != denied_.end()) {
    return Status::PermissionDenied(std::string(path) + ": Permission denied");
  }
  auto it = files_.find(std::string_view(path));
  if (it == files_.end()) return Status::NotFound(std::string(path) + ": No such file or directory");
  *out = it->second;
  return Status::Ok();
}

Status MemEnv::ListDir(const char* path, std::vector<std::string>* names) {
  names->clear();
  std::string prefix = std::string(path);
  if (prefix.empty() || prefix.back() != '/') prefix += '/';
  for (auto it = files_.lower_bound(prefix); it != files_.end(); ++it) {
    const std::string& p = it->first;
    if (p.compare(0, prefix.size(), prefix) != 0) break;
    std::string rest = p.substr(prefix.size());
    std::string name = rest.substr(0, rest.find('/'));
    if (names->empty() || names->back() != name) names->push_back(name);
  }
  if (names->empty()) return Status::NotFound(std::string(path) + ": No such file or directory");
  return Status::Ok();
}

}  // namespace tv

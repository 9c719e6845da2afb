#include "core/env.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

namespace tv {

Env* Env::Default() {
  static PosixEnv env;
  return &env;
}

namespace {

// Reads `fd` to its end into *out (cleared first): with read() from the current
// offset when `offset` is negative, else with pread() from `offset`. Chunks go
// through a stack buffer and are appended, so the reused buffer is neither
// zero-filled nor reallocated in steady state. In general the read that
// returns 0 is needed: a short read is not the end of every file (a seq_file of
// many records stops at its buffer's end, a page). With `short_is_whole`, a
// first read of less than kWholeBelow bytes is taken as the whole file: true
// of /proc files made in one piece (stat, io, meminfo) and of those whose
// records are a few bytes (children), far below a page; it saves a syscall.
constexpr ssize_t kWholeBelow = 2048;

Status ReadToEnd(int fd, off_t offset, const char* path, std::string* out,
                 bool short_is_whole = false) {
  char chunk[8192];
  out->clear();
  for (;;) {
    ssize_t n =
        offset < 0 ? ::read(fd, chunk, sizeof(chunk)) : ::pread(fd, chunk, sizeof(chunk), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      out->clear();
      return ErrnoStatus(path, err);
    }
    if (n == 0) return Status::Ok();
    out->append(chunk, static_cast<size_t>(n));
    if (short_is_whole && n < kWholeBelow && out->size() == static_cast<size_t>(n)) {
      return Status::Ok();
    }
    if (offset >= 0) offset += n;
  }
}

class PosixRereadableFile final : public RereadableFile {
 public:
  PosixRereadableFile(int fd, const char* path) : fd_(fd), path_(path) {}
  ~PosixRereadableFile() override { ::close(fd_); }
  PosixRereadableFile(const PosixRereadableFile&) = delete;
  PosixRereadableFile& operator=(const PosixRereadableFile&) = delete;

  Status Read(std::string* out) override {
    return ReadToEnd(fd_, 0, path_.c_str(), out, /*short_is_whole=*/true);
  }

 private:
  int fd_;
  std::string path_;  // for messages
};

class EnvRereadableFile final : public RereadableFile {
 public:
  EnvRereadableFile(Env* env, const char* path) : env_(env), path_(path) {}
  Status Read(std::string* out) override { return env_->ReadFile(path_.c_str(), out); }

 private:
  Env* env_;
  std::string path_;
};

}  // namespace

Status Env::OpenRereadable(const char* path, std::unique_ptr<RereadableFile>* out) {
  *out = std::make_unique<EnvRereadableFile>(this, path);
  return Status::Ok();
}

Status PosixEnv::ReadFile(const char* path, std::string* out) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(path, errno);
  Status s = ReadToEnd(fd, -1, path, out);
  ::close(fd);
  return s;
}

Status PosixEnv::OpenRereadable(const char* path, std::unique_ptr<RereadableFile>* out) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(path, errno);
  *out = std::make_unique<PosixRereadableFile>(fd, path);
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

class MemEnv::Handle final : public RereadableFile {
 public:
  Handle(MemEnv* env, const char* path) : env_(env), path_(path) { ++env_->open_handles_; }
  ~Handle() override { --env_->open_handles_; }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  Status Read(std::string* out) override { return env_->ReadFile(path_.c_str(), out); }

 private:
  MemEnv* env_;
  std::string path_;
};

Status MemEnv::OpenRereadable(const char* path, std::unique_ptr<RereadableFile>* out) {
  std::string probe;
  Status s = ReadFile(path, &probe);
  if (!s.ok()) return s;
  *out = std::make_unique<Handle>(this, path);
  return Status::Ok();
}

Status MemEnv::ReadFile(const char* path, std::string* out) {
  if (std::find(denied_.begin(), denied_.end(), path) != denied_.end()) {
    return Status::PermissionDenied(std::string(path) + ": Permission denied");
  }
  auto it = files_.find(std::string_view(path));
  if (it == files_.end())
    return Status::NotFound(std::string(path) + ": No such file or directory");
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

Status HeldFile::Read(Env* env, std::string* out) {
  if (!file_) {
    Status s = env->OpenRereadable(path_.c_str(), &file_);
    if (!s.ok()) {
      file_.reset();
      return s;
    }
  }
  Status s = file_->Read(out);
  if (!s.ok()) file_.reset();
  return s;
}

}  // namespace tv

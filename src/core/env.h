// Env: the seam between trainvitals and the file system. Sources read /proc and
// /sys only through an Env, so tests run them on fixture text (MemEnv) and the
// benchmarks measure the real thing (PosixEnv).
//
// Thread safety: PosixEnv is stateless and safe from any thread. MemEnv is not
// thread-safe; tests use it from one thread. A RereadableFile belongs to one
// thread at a time.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tv {

// A file opened once and read whole again and again: for /proc and /sys files
// whose content the kernel makes afresh at each read from the start, so a
// reader skips the path lookup of open and close. One opened on a /proc/PID
// file refers to that very process: once it exits, Read fails with NotFound,
// even if its PID is reused. For files made in one piece or of tiny records
// (stat, io, meminfo, children, cgroup counters): a first read shorter than
// 2 KiB is taken as the whole file, without the read that returns 0.
class RereadableFile {
 public:
  virtual ~RereadableFile() = default;

  // Replaces *out with the whole current content; like Env::ReadFile, `out`
  // keeps its capacity.
  virtual Status Read(std::string* out) = 0;
};

class Env {
 public:
  virtual ~Env() = default;

  // Replaces *out with the whole content of `path`. `out` keeps its capacity, so
  // callers that reuse one buffer read without allocating.
  virtual Status ReadFile(const char* path, std::string* out) = 0;

  // Names in directory `path` (without "." and ".."), in no particular order.
  virtual Status ListDir(const char* path, std::vector<std::string>* names) = 0;

  // Opens `path` for repeated whole reads; *out owns the handle (a file
  // descriptor in PosixEnv) until destroyed. Fails like ReadFile when `path`
  // cannot be opened. The default handle calls ReadFile(path) on each Read.
  virtual Status OpenRereadable(const char* path, std::unique_ptr<RereadableFile>* out);

  // Process-wide default Env on the real file system.
  static Env* Default();
};

// A file read again and again through `env` (a /proc or cgroup file each tick):
// opened on first use, re-read in place after that, reopened after a failure.
// Not thread-safe.
class HeldFile {
 public:
  explicit HeldFile(std::string path) : path_(std::move(path)) {}
  Status Read(Env* env, std::string* out);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unique_ptr<RereadableFile> file_;
};

// The real file system.
class PosixEnv final : public Env {
 public:
  Status ReadFile(const char* path, std::string* out) override;
  Status ListDir(const char* path, std::vector<std::string>* names) override;
  // Opens with O_CLOEXEC; each Read is pread from offset 0 until end of file.
  Status OpenRereadable(const char* path, std::unique_ptr<RereadableFile>* out) override;
};

// An in-memory file system for tests: a map from path to content. A handle from
// OpenRereadable reads the path's content at each Read, and fails with NotFound
// while the path is absent (the process "exited"). Handles must not outlive
// their MemEnv.
class MemEnv final : public Env {
 public:
  void Set(std::string path, std::string content) { files_[std::move(path)] = std::move(content); }
  void Remove(const std::string& path) { files_.erase(path); }
  // Makes ReadFile, OpenRereadable and handle reads of `path` fail with
  // permission denied.
  void Deny(std::string path) { denied_.push_back(std::move(path)); }
  Status ReadFile(const char* path, std::string* out) override;
  Status ListDir(const char* path, std::vector<std::string>* names) override;
  Status OpenRereadable(const char* path, std::unique_ptr<RereadableFile>* out) override;
  // Handles from OpenRereadable not yet destroyed.
  int open_handles() const { return open_handles_; }

 private:
  class Handle;
  int open_handles_ = 0;
  std::map<std::string, std::string, std::less<>> files_;
  std::vector<std::string> denied_;
};

}  // namespace tv

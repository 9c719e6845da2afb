// Env: the seam between trainvitals and the file system. Sources read /proc and
// /sys only through an Env, so tests run them on fixture text (MemEnv) and the
// benchmarks measure the real thing (PosixEnv).
//
// Thread safety: PosixEnv is stateless and safe from any thread. MemEnv is not
// thread-safe; tests use it from one thread.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tv {

class Env {
 public:
  virtual ~Env() = default;

  // Replaces *out with the whole content of `path`. `out` keeps its capacity, so
  // callers that reuse one buffer read without allocating.
  virtual Status ReadFile(const char* path, std::string* out) = 0;

  // Names in directory `path` (without "." and ".."), in no particular order.
  virtual Status ListDir(const char* path, std::vector<std::string>* names) = 0;

  // Process-wide default Env on the real file system.
  static Env* Default();
};

// The real file system.
class PosixEnv final : public Env {
 public:
  Status ReadFile(const char* path, std::string* out) override;
  Status ListDir(const char* path, std::vector<std::string>* names) override;
};

// An in-memory file system for tests: a map from path to content.
class MemEnv final : public Env {
 public:
  void Set(std::string path, std::string content) { files_[std::move(path)] = std::move(content); }
  void Remove(const std::string& path) { files_.erase(path); }
  // Makes ReadFile of `path` fail with permission denied.
  void Deny(std::string path) { denied_.push_back(std::move(path)); }
  Status ReadFile(const char* path, std::string* out) override;
  Status ListDir(const char* path, std::vector<std::string>* names) override;

 private:
  std::map<std::string, std::string, std::less<>> files_;
  std::vector<std::string> denied_;
};

}  // namespace tv

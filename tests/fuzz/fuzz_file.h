// For fuzz targets whose code under test reads a file by path: the input is
// written to one scratch file (or directory) per process, reused for every
// input and removed when the process exits.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tv::fuzz {

inline std::string TempBase() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// Removes `path` (a file or a directory with its files) at exit.
inline void RemoveAtExit(const std::string& path) {
  static std::vector<std::string> removed;
  if (removed.empty()) {
    std::atexit([] {
      std::error_code ec;
      for (const std::string& p : removed) std::filesystem::remove_all(p, ec);
    });
  }
  removed.push_back(path);
}

// A new directory <TMPDIR>/trainvitals-fuzz-<name>-XXXXXX, removed at exit.
inline std::string MakeScratchDir(const char* name) {
  std::string dir = TempBase() + "/trainvitals-fuzz-" + name + "-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) abort();
  RemoveAtExit(dir);
  return dir;
}

// Writes `data` to <TMPDIR>/trainvitals-fuzz-<pid><suffix> and returns the path.
inline const std::string& WriteScratchFile(const uint8_t* data, size_t size, const char* suffix) {
  static const std::string path = [suffix] {
    std::string p = TempBase() + "/trainvitals-fuzz-" + std::to_string(getpid()) + suffix;
    RemoveAtExit(p);
    return p;
  }();
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

}  // namespace tv::fuzz

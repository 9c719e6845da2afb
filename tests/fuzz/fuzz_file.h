// For fuzz targets whose code under test reads a file by path: the input is
// written to one scratch file per process, which is reused for every input.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace tv::fuzz {

// Writes `data` to <TMPDIR>/trainvitals-fuzz-<pid><suffix> and returns the path.
inline const std::string& WriteScratchFile(const uint8_t* data, size_t size, const char* suffix) {
  static const std::string path = [suffix] {
    const char* tmp = std::getenv("TMPDIR");
    return std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/trainvitals-fuzz-" +
           std::to_string(getpid()) + suffix;
  }();
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

}  // namespace tv::fuzz

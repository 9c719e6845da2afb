// /proc/PID/mountinfo (octal escapes included).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/mountinfo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const tv::MountInfo& m :
       tv::ParseMountInfo(std::string_view(reinterpret_cast<const char*>(data), size))) {
    tv::HasOption(m.super_options, "memory");
  }
  return 0;
}

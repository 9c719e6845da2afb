// /proc/meminfo.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/host_memory.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tv::ParseMemInfo(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

// /proc/net/dev.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/network.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tv::ParseNetDev(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

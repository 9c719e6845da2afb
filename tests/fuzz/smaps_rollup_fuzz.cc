// /proc/PID/smaps_rollup (kB lines turned into bytes).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/proc_pid_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tv::ParseSmapsRollup(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

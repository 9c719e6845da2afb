// /proc/PID/cmdline as one line, cut to a width.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sources/proc_pid_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  size_t max_chars = data[0];
  std::string_view raw(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string line = tv::FormatCmdline(raw, max_chars);
  if (line.size() > raw.size()) std::abort();
  if (line.find('\0') != std::string::npos) std::abort();
  return 0;
}

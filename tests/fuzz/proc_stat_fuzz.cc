// /proc/stat: the cpu and cpuN lines.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/host_cpu.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // The same text twice: the busy ratio of an interval with no change.
  tv::ProcStatCpu a = tv::ParseProcStatCpu(text);
  tv::ProcStatCpu b;
  tv::ParseProcStatCpu(text.substr(size / 2), &b);
  tv::BusyRatio(a.total, b.total);
  return 0;
}

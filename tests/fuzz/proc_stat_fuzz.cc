// /proc/stat: the cpu and cpuN lines.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sources/host_cpu.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // Two reads: the whole text, then its second half into the same struct
  // (which reuses its cores); the busy ratio between them stays in 0..1.
  tv::ProcStatCpu a = tv::ParseProcStatCpu(text);
  tv::ProcStatCpu b = a;
  tv::ParseProcStatCpu(text.substr(size / 2), &b);
  if (a.all && b.all) {
    auto busy = tv::BusyRatio(*a.all, *b.all);
    if (busy && !(*busy >= 0 && *busy <= 1)) std::abort();
  }
  return 0;
}

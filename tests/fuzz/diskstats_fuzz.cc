// /proc/diskstats, and the /sys/block names derived from its device names.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sources/disks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const tv::DiskStat& disk :
       tv::ParseDiskStats(std::string_view(reinterpret_cast<const char*>(data), size))) {
    tv::IsVirtualDisk(disk.name);
    tv::SysBlockName(disk.name);
  }
  return 0;
}

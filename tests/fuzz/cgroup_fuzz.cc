// /proc/PID/cgroup, the limit files, and the walk from a cgroup's directory up
// to its mount (with a mountinfo text from the same input).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "sources/cgroup.h"
#include "sources/mountinfo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  std::string limit = in.ConsumeRandomLengthString(64);
  std::string period = in.ConsumeRandomLengthString(64);
  std::string mountinfo = in.ConsumeRandomLengthString(4096);
  std::string proc_cgroup = in.ConsumeRemainingBytesAsString();

  tv::ParseMemoryLimit(limit);
  tv::ParseCpuMax(limit);
  tv::ParseCfsQuota(limit, period);

  auto mounts = tv::ParseMountInfo(mountinfo);
  auto cgroups = tv::ParseProcCgroup(proc_cgroup);
  for (const char* controller : {"memory", "cpu"}) {
    auto dir = tv::ResolveCgroupDir(mounts, cgroups, controller);
    if (!dir) continue;
    // The walk ends at the mount point, one directory per level.
    if (tv::CgroupChain(*dir).size() > dir->dir.size() + 1) std::abort();
  }
  return 0;
}

#include "sources/host_sources.h"

#include "sources/cgroup.h"
#include "sources/disks.h"
#include "sources/host_cpu.h"
#include "sources/host_memory.h"
#include "sources/load_average.h"
#include "sources/network.h"
#include "sources/rapl.h"

namespace tv {

std::vector<std::unique_ptr<Source>> MakeHostSources(Env* env, int cgroup_pid) {
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(std::make_unique<HostCpuSource>(env));
  sources.push_back(std::make_unique<HostMemorySource>(env));
  sources.push_back(std::make_unique<CgroupSource>(env, cgroup_pid));
  sources.push_back(std::make_unique<LoadAverageSource>(env));
  sources.push_back(std::make_unique<DisksSource>(env));
  sources.push_back(std::make_unique<NetworkSource>(env));
  sources.push_back(std::make_unique<RaplSource>(env));
  return sources;
}

}  // namespace tv

#include "run/sources.h"

#include "core/env.h"
#include "sources/gpu_deferred.h"
#include "sources/host_sources.h"
#include "sources/process_tree.h"

namespace tv {

RunSources MakeSources(const Config& config, int root_pid) {
  Env* env = Env::Default();
  RunSources out;
  out.sources = MakeHostSources(env, root_pid);
  out.sources.push_back(std::make_unique<ProcessTreeSource>(env, std::vector<int>{root_pid}));
  GpuSourceOptions gpu = GpuSourceOptions::FromEnvironment();
  gpu.gpus = config.gpus;
  gpu.real_ids = config.gpu_ids;
  // The driver opens on a thread of its own (about 80 ms on an H200 host): the
  // command is not kept waiting, nor a short run open.
  auto source = std::make_unique<DeferredGpuSource>(gpu);
  out.gpu = source.get();
  out.sources.push_back(std::move(source));
  return out;
}

}  // namespace tv

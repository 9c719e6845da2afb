#include "run/sources.h"

#include "core/env.h"
#include "sources/gpu_source.h"
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
  if (auto source = GpuSource::Create(gpu, &out.notices)) {
    out.gpu_info = source->static_info();
    out.sources.push_back(std::move(source));
  }
  return out;
}

}  // namespace tv

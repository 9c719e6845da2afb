#include "run/sources.h"

#include <unistd.h>

#include "core/env.h"
#include "sources/gpu_source.h"
#include "sources/host_sources.h"
#include "sources/process_tree.h"
#include "sources/run_dir_space.h"

namespace tv {

RunSources MakeSources(const Config& config, int root_pid, const std::string& run_dir) {
  Env* env = Env::Default();
  RunSources out;
  out.sources = MakeHostSources(env, root_pid);
  if (!run_dir.empty()) out.sources.push_back(std::make_unique<RunDirSpaceSource>(run_dir));
  ProcessTreeOptions tree;
  // Watching an ancestor (attach to one's shell) must not count ourselves; in
  // the Python mode the job is this very process.
  if (root_pid != ::getpid()) tree.excluded_pid = ::getpid();
  out.sources.push_back(
      std::make_unique<ProcessTreeSource>(env, std::vector<int>{root_pid}, std::move(tree)));
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

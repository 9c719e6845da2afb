#include "run/sources.h"

#include "core/env.h"
#include "sources/host_sources.h"
#include "sources/process_tree.h"

namespace tv {

std::vector<std::unique_ptr<Source>> MakeSources(const Config& config, int root_pid) {
  (void)config;
  Env* env = Env::Default();
  std::vector<std::unique_ptr<Source>> sources = MakeHostSources(env, root_pid);
  sources.push_back(std::make_unique<ProcessTreeSource>(env, std::vector<int>{root_pid}));
  return sources;
}

}  // namespace tv

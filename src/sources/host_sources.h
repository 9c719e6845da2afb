// The host sources in the order the sampler should run them: CPU and memory
// first, then the cgroup source (it lowers the limits they set), then the
// row-tick sources (load, disks, network, RAPL).
//
// Thread safety: MakeHostSources may be called from any thread; the sources it
// returns belong to the sampler thread.
#pragma once

#include <memory>
#include <vector>

#include "core/env.h"
#include "core/source.h"

namespace tv {

// `env` must outlive the sources. `cgroup_pid` is the job's root process whose
// cgroup limits apply; <= 0 means trainvitals' own.
std::vector<std::unique_ptr<Source>> MakeHostSources(Env* env, int cgroup_pid);

}  // namespace tv

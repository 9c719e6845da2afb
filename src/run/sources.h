// Builds the sources for a run, in the order a tick reads them (run/pipeline.h
// kTickOrder): host first (the job's cgroup last among them), then the run directory's space, the
// process tree, the GPUs (which attribute device memory to the tree's PIDs) and the markers (which
// fill the allocator figures of the GPUs found).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/gpu_info.h"
#include "core/source.h"
#include "run/pipeline.h"

namespace tv {

struct JobCgroupView;
class GpuOpening;
struct GpuSourceOptions;
class MarkerEndpoint;
class MarkerSource;
class OomKillWatch;

struct RunSources {
  std::vector<std::unique_ptr<Source>> sources;
  std::vector<Stage> stages;  // each source's stage (parallel to `sources`)
  // meta.json's GPU part: the driver and the GPUs watched; null without a GPU source.
  std::optional<GpuDriverInfo> gpu_driver;
  std::vector<GpuInfo> gpus;
  // Problems met while opening sources (no GPU driver, ...), said once.
  std::vector<Notice> notices;
  // The markers' source (owned by `sources`, then by the sampler); null without
  // an endpoint. It carries the back-channel to the training processes.
  MarkerSource* markers = nullptr;
  // The cgroup source's count of OOM kills; it outlives the source. Null
  // without a cgroup source.
  std::shared_ptr<OomKillWatch> oom_kills;
};

// The GPU source's options for a run of `config`.
GpuSourceOptions RunGpuOptions(const Config& config);

// `run_dir`: the run directory, whose file system's space the sources watch
// (none when empty). `markers`: the endpoint the training processes report
// to, not owned; when null, `markers_error` says why, as a notice. `cgroup`:
// the job's own cgroup, whose totals are read each tick, or why it has none
// (a notice); null when there is no question of one (the Python binding).
// `gpus`: the driver already opening aside (`run`, whose child `root_pid` is):
// waited for while the child lives (a command shorter than the driver's
// opening, about 50 ms on an H200 host, is not kept open for it, and its run
// has no GPU); else the GPUs are opened here.
RunSources MakeSources(const Config& config, int root_pid, const std::string& run_dir,
                       MarkerEndpoint* markers, const std::string& markers_error,
                       const JobCgroupView* cgroup = nullptr, GpuOpening* gpus = nullptr);

}  // namespace tv

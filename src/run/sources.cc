#include "run/sources.h"

#include <sys/wait.h>
#include <unistd.h>

#include "core/env.h"
#include "sources/cgroup.h"
#include "sources/cgroup_usage.h"
#include "sources/gpu_opening.h"
#include "sources/gpu_source.h"
#include "sources/host_sources.h"
#include "sources/markers.h"
#include "sources/process_tree.h"
#include "sources/run_dir_space.h"

namespace tv {
namespace {

void Add(Stage stage, std::unique_ptr<Source> source, RunSources* out) {
  out->sources.push_back(std::move(source));
  out->stages.push_back(stage);
}

// Whether the child `pid` has ended (it stays to be reaped).
bool ChildEnded(int pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

// The opening's answer, waited for while the child lives.
std::unique_ptr<GpuSource> TakeOpened(GpuOpening* gpus, int child, std::vector<Notice>* notices) {
  bool answered = gpus->Wait([child] { return ChildEnded(child); });
  return answered ? gpus->Take(notices) : nullptr;
}

}  // namespace

GpuSourceOptions RunGpuOptions(const Config& config) {
  GpuSourceOptions gpu = GpuSourceOptions::FromEnvironment();
  gpu.gpus = config.gpus;
  gpu.real_ids = config.gpu_ids;
  return gpu;
}

RunSources MakeSources(const Config& config, int root_pid, const std::string& run_dir,
                       MarkerEndpoint* markers, const std::string& markers_error,
                       const JobCgroupView* cgroup, GpuOpening* gpus) {
  Env* env = Env::Default();
  RunSources out;
  for (Stage stage : kTickOrder) {
    switch (stage) {
      case Stage::kHost:
        for (auto& source : MakeHostSources(env, root_pid)) {
          if (auto* cgroup = dynamic_cast<CgroupSource*>(source.get())) {
            out.oom_kills = cgroup->oom_kills();
          }
          Add(stage, std::move(source), &out);
        }
        // Before the process tree, which reads its files less often then.
        if (cgroup != nullptr && !cgroup->dirs.empty()) {
          Add(stage, std::make_unique<CgroupUsageSource>(env, cgroup->dirs), &out);
        } else if (cgroup != nullptr) {
          out.notices.push_back(
              {"job_cgroup", cgroup->why_not + "; the job's figures come from its processes"});
        }
        break;
      case Stage::kRunDirSpace:
        if (!run_dir.empty()) Add(stage, std::make_unique<RunDirSpaceSource>(run_dir), &out);
        break;
      case Stage::kProcessTree: {
        ProcessTreeOptions tree;
        // Watching an ancestor (attach to one's shell) must not count
        // ourselves; in the Python mode the job is this very process.
        if (root_pid != ::getpid()) tree.excluded_pid = ::getpid();
        Add(stage,
            std::make_unique<ProcessTreeSource>(env, std::vector<int>{root_pid}, std::move(tree)),
            &out);
        break;
      }
      case Stage::kGpu: {
        std::unique_ptr<GpuSource> source =
            gpus != nullptr ? TakeOpened(gpus, root_pid, &out.notices)
                            : GpuSource::Create(RunGpuOptions(config), &out.notices);
        if (source) {
          out.gpu_driver = source->driver();
          out.gpus = source->gpus();
          Add(stage, std::move(source), &out);
        }
        break;
      }
      case Stage::kMarkers:
        if (markers != nullptr) {
          auto source = std::make_unique<MarkerSource>(markers, run_dir);
          out.markers = source.get();
          Add(stage, std::move(source), &out);
        } else {
          out.notices.push_back({"markers", markers_error});
        }
        break;
      default:  // an observer
        break;
    }
  }
  return out;
}

}  // namespace tv

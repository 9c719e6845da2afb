#include "sources/gpu_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "sources/gpu_visible.h"
#include "sources/nvml/nvml_backend.h"

namespace tv {
namespace {

GpuInfo UnitInfo(const GpuUnit& unit, int index, bool real_ids) {
  GpuInfo g;
  g.index = index;
  g.physical_index = unit.physical_index;
  g.mig_instance = unit.mig_instance;
  g.name = unit.name;
  g.id = GpuIdHash(unit.uuid);
  g.energy_source = unit.energy_source;
  if (real_ids) {
    g.uuid = unit.uuid;
    g.serial = unit.serial;
  }
  g.compute_capability = unit.compute_capability;
  g.memory_total_bytes = unit.memory_total_bytes;
  g.power_limit_watts = unit.power_limit_watts;
  g.mig_enabled = unit.mig_enabled;
  return g;
}

}  // namespace

std::string GpuIdHash(std::string_view uuid) {
  uint64_t h = 14695981039346656037ULL;
  for (char c : uuid) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return fmt::format("gpu-{:012x}", h & 0xFFFFFFFFFFFFULL);
}

GpuSourceOptions GpuSourceOptions::FromEnvironment() {
  GpuSourceOptions o;
  if (const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES")) o.cuda_visible_devices = cvd;
  return o;
}

std::unique_ptr<GpuSource> GpuSource::Create(const GpuSourceOptions& options,
                                             std::vector<Notice>* notices) {
  Status status;
  NvmlOptions nvml{options.nvml_library, options.mig};
  std::unique_ptr<NvmlBackend> backend = NvmlBackend::Open(nvml, &status);
  if (backend == nullptr) {
    notices->push_back(Notice{"nvml", status.message()});
    return nullptr;
  }
  if (!status.ok()) notices->push_back(Notice{"nvml", status.message()});
  return Create(std::move(backend), options, notices);
}

std::unique_ptr<GpuSource> GpuSource::Create(std::unique_ptr<GpuBackend> backend,
                                             const GpuSourceOptions& options,
                                             std::vector<Notice>* notices) {
  const std::vector<GpuUnit>& units = backend->units();
  // Identities by physical index, for CUDA_VISIBLE_DEVICES.
  std::vector<GpuIdentity> gpus;
  std::vector<size_t> whole;  // unit of each physical GPU
  for (size_t u = 0; u < units.size(); ++u) {
    if (units[u].mig_instance < 0) {
      gpus.push_back(GpuIdentity{units[u].uuid, {}});
      whole.push_back(u);
    } else if (!gpus.empty()) {
      gpus.back().migs.push_back(GpuIdentity::Mig{units[u].uuid, units[u].mig_instance});
    }
  }
  std::optional<std::string_view> cvd;
  if (options.cuda_visible_devices) cvd = *options.cuda_visible_devices;
  std::vector<VisibleDevice> visible = ResolveVisibleDevices(cvd, gpus);

  Env* env = options.env != nullptr ? options.env : Env::Default();
  std::unique_ptr<GpuSource> source(new GpuSource(std::move(backend), env));
  auto watch = [&](size_t u, int index) {
    for (const Watched& w : source->watched_) {
      if (w.unit == u) return;
    }
    source->watched_.push_back(Watched{u, index, false});
  };
  for (const VisibleDevice& v : visible) {
    if (!options.gpus.empty() &&
        std::find(options.gpus.begin(), options.gpus.end(), v.cuda_index) == options.gpus.end()) {
      continue;
    }
    size_t gpu = whole[static_cast<size_t>(v.physical_index)];
    watch(gpu, v.cuda_index);
    for (size_t u = gpu + 1; u < units.size() && units[u].parent == static_cast<int>(gpu); ++u) {
      if (!options.mig) break;
      if (v.mig_instance < 0 || units[u].mig_instance == v.mig_instance) watch(u, v.cuda_index);
    }
  }

  source->all_processes_ = options.all_processes;
  source->node_ = options.node;
  GpuBackend& b = *source->backend_;
  source->driver_ = b.DriverInfo();
  source->driver_.cuda_visible_devices = options.cuda_visible_devices;
  for (const Watched& w : source->watched_) {
    source->gpus_.push_back(UnitInfo(units[w.unit], w.index, options.real_ids));
  }

  if (source->watched_.empty()) {
    notices->push_back(Notice{
        "nvml",
        fmt::format("no GPU to watch among the {} found ({}{}): "
                    "GPU metrics off, host metrics go on",
                    gpus.size(),
                    options.cuda_visible_devices
                        ? fmt::format("CUDA_VISIBLE_DEVICES='{}'", *options.cuda_visible_devices)
                        : "CUDA_VISIBLE_DEVICES unset",
                    options.gpus.empty() ? "" : ", narrowed by --gpus")});
    return nullptr;
  }
  return source;
}

void GpuSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  const std::vector<GpuUnit>& units = backend_->units();
  if (tick.row_tick) seen_pids_.clear();
  for (Watched& w : watched_) {
    if (w.lost) continue;
    const GpuUnit& unit = units[w.unit];
    GpuSample& g = out->gpus.emplace_back();
    g.index = w.index;
    g.physical_index = unit.physical_index;
    g.mig_instance = unit.mig_instance;
    g.uuid = unit.uuid;
    backend_->ReadDevice(w.unit, tick, &g);
    Attribute(w, tick, out->job.pids, &g);
    if (backend_->lost(w.unit)) {
      w.lost = true;
      out->gpus.pop_back();
      notices->push_back(Notice{
          "gpu_lost",
          fmt::format("GPU {}{} ({}, physical {}) is lost (GPU_IS_LOST: fallen off the bus or "
                      "needs a reset): no longer sampled, the run goes on",
                      w.index,
                      unit.mig_instance >= 0 ? fmt::format(" MIG {}", unit.mig_instance) : "",
                      unit.name, unit.physical_index)});
    }
  }
  backend_->TakeNotices(notices);
  if (tick.row_tick) {
    pids_.Retain(seen_pids_);
    std::erase_if(names_, [&](const auto& kv) {
      return std::find(seen_pids_.begin(), seen_pids_.end(), kv.first) == seen_pids_.end();
    });
  }
}

std::vector<GpuProcess> GpuSource::ProcessesOf(std::string_view uuid) const {
  std::vector<GpuProcess> out;
  const std::vector<GpuUnit>& units = backend_->units();
  for (const Watched& w : watched_) {
    if (w.lost || units[w.unit].uuid != uuid) continue;
    for (const GpuProcessUse& use : w.processes) {
      GpuProcess& p = out.emplace_back();
      p.pid = use.pid;
      p.memory_bytes = use.memory_bytes;
      if (!w.utils_known) continue;
      double sm = 0;
      for (const GpuProcessUtil& u : w.last_utils) {
        if (u.pid == use.pid) sm += u.sm_ratio;
      }
      p.sm_util_ratio = std::min(1.0, sm);
    }
  }
  return out;
}

const std::string& GpuSource::NameOf(int pid) {
  auto it = names_.find(pid);
  if (it != names_.end()) return it->second;
  std::string comm;
  if (!env_->ReadFile(fmt::format("/proc/{}/comm", pid).c_str(), &comm).ok()) comm.clear();
  while (!comm.empty() && (comm.back() == '\n' || comm.back() == '\0')) comm.pop_back();
  return names_.emplace(pid, std::move(comm)).first->second;
}

namespace {

// Puts `p` into `list` (kept in descending memory order, unknown memory last)
// if it is among the top kGpuTopProcesses.
void InsertTop(const GpuProcessUse& p, bool mine, GpuProcessList* list) {
  auto below = [](const std::optional<double>& a, const std::optional<double>& b) {
    return a.value_or(-1) < b.value_or(-1);
  };
  size_t at = list->size;
  while (at > 0 && below(list->items[at - 1].memory_bytes, p.memory_bytes)) --at;
  if (at >= kGpuTopProcesses) return;
  size_t last = std::min(list->size, kGpuTopProcesses - 1);
  for (size_t i = last; i > at; --i) list->items[i] = std::move(list->items[i - 1]);
  if (list->size < kGpuTopProcesses) ++list->size;
  GpuProcess& out = list->items[at];
  out.pid = p.pid;
  out.name.clear();
  out.is_job = mine;
  out.memory_bytes = p.memory_bytes;
  out.sm_util_ratio.reset();
}

}  // namespace

void GpuSource::Attribute(Watched& w, const Tick& tick, const std::vector<int>& job_pids,
                          GpuSample* g) {
  bool moved = !g->memory_used_bytes || w.listed_at_used != g->memory_used_bytes;
  if (tick.row_tick || !w.listed_once || moved) {
    w.listed_ok = backend_->ReadProcesses(w.unit, &w.listed);
    if (!w.listed_ok) w.listed.clear();
    w.listed_once = true;
    w.listed_at_used = g->memory_used_bytes;
    if (all_processes_) w.processes.assign(w.listed.begin(), w.listed.end());
  }
  if (w.listed_ok) {
    g->processes.known = true;
    double job_mem = 0, other_mem = 0;
    int job = 0, other = 0;
    bool job_mem_known = true, other_mem_known = true;
    for (const GpuProcessUse& p : w.listed) {
      seen_pids_.push_back(p.pid);
      bool mine = pids_.InJob(p.pid, job_pids);
      InsertTop(p, mine, &g->processes);
      (mine ? job : other) += 1;
      double& mem = mine ? job_mem : other_mem;
      if (p.memory_bytes) {
        mem += *p.memory_bytes;
      } else {
        (mine ? job_mem_known : other_mem_known) = false;
      }
    }
    if (!node_) {  // the whole node has no job's share
      g->job_processes = job;
      g->other_processes = other;
      if (job_mem_known || job_mem > 0) g->job_memory_bytes = job_mem;
      if (other_mem_known || other_mem > 0) g->other_memory_bytes = other_mem;
    }
  }
  // About 2.4 ms a call on an H200: every kProcessUtilEvery_s, over the
  // samples the driver kept since the previous call, when the backend's
  // schedule says (its expensive calls take turns).
  if (backend_->ProcessUtilizationDue(w.unit, tick) &&
      backend_->ReadProcessUtilization(w.unit, &utils_)) {
    double sm = 0;
    for (const GpuProcessUtil& u : utils_) {
      if (pids_.InJob(u.pid, job_pids)) sm += u.sm_ratio;
    }
    if (!node_) g->job_sm_util_ratio = std::min(1.0, sm);
    w.last_utils.assign(utils_.begin(), utils_.end());
    w.utils_known = true;
  }
  for (size_t i = 0; i < g->processes.size; ++i) {
    GpuProcess& p = g->processes.items[i];
    p.name = NameOf(p.pid);
    if (!w.utils_known) continue;
    // A process absent from the read ran no kernels in its window.
    double sm = 0;
    for (const GpuProcessUtil& u : w.last_utils) {
      if (u.pid == p.pid) sm += u.sm_ratio;
    }
    p.sm_util_ratio = std::min(1.0, sm);
  }
}

}  // namespace tv

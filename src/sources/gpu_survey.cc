#include "sources/gpu_survey.h"

#include <chrono>
#include <thread>

#include "sources/nvml/nvml_backend.h"

namespace tv {

std::vector<GpuCandidate> SurveyGpus(const std::string& nvml_library, double window_s,
                                     std::string* error) {
  Status status;
  std::unique_ptr<NvmlBackend> backend =
      NvmlBackend::Open(NvmlOptions{nvml_library, true}, &status);
  if (backend == nullptr) {
    // Said as the monitor says it, less what the monitor then does.
    *error = status.message().substr(0, status.message().find(": GPU metrics off"));
    return {};
  }
  const std::vector<GpuUnit>& units = backend->units();
  std::vector<GpuCandidate> out;
  std::vector<size_t> unit_of;
  for (size_t u = 0; u < units.size(); ++u) {
    const GpuUnit& unit = units[u];
    if (unit.mig_enabled) continue;  // its slices are listed instead
    GpuSample s;
    Tick tick;
    tick.row_tick = true;
    backend->ReadDevice(u, tick, &s);
    if (backend->lost(u)) continue;
    GpuCandidate c;
    c.index = unit.physical_index;
    c.mig_instance = unit.mig_instance;
    c.uuid = unit.uuid;
    c.name = unit.name;
    c.memory_total_bytes = s.memory_total_bytes ? s.memory_total_bytes : unit.memory_total_bytes;
    if (s.memory_used_bytes && c.memory_total_bytes) {
      c.memory_free_bytes = *c.memory_total_bytes - *s.memory_used_bytes;
    }
    std::vector<GpuProcessUse> procs;
    if (backend->ReadProcesses(u, &procs)) c.processes = static_cast<int>(procs.size());
    c.busy_ratio = backend->RecentUtilization(u, window_s);
    out.push_back(std::move(c));
    unit_of.push_back(u);
  }
  // A driver loaded a moment ago has no history yet: a quarter second more.
  bool missing = false;
  for (size_t i = 0; i < out.size(); ++i) {
    missing = missing || (!out[i].busy_ratio && out[i].mig_instance < 0);
  }
  if (missing) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    for (size_t i = 0; i < out.size(); ++i) {
      if (!out[i].busy_ratio) out[i].busy_ratio = backend->RecentUtilization(unit_of[i], window_s);
    }
  }
  if (out.empty()) *error = "no GPU could be read";
  return out;
}

}  // namespace tv

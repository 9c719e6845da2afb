// GpuBackend: the interface every GPU vendor's library fills (NVML today, a
// later ROCm SMI backend the same way). A backend enumerates "units" — whole
// GPUs and, where the GPU is partitioned, its MIG slices — reads each unit's
// metrics into a GpuSample and lists the compute processes on it. Job
// attribution, device numbering and events are GpuSource's work, not the
// backend's.
//
// Thread safety: none; a backend is used from the sampler thread only (or from
// one thread in `check`).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/gpu_info.h"
#include "core/gpu_sample.h"
#include "core/source.h"

namespace tv {

// What does not change while a unit is watched.
struct GpuUnit {
  int physical_index = 0;  // the vendor library's index of the GPU
  int mig_instance = -1;   // GPU instance id of a MIG slice; -1 for the whole GPU
  int parent = -1;         // for a MIG slice: index into units() of its GPU
  std::string uuid;        // "GPU-..." or "MIG-..."
  std::string serial;
  std::string name;
  std::string compute_capability;  // "9.0"
  std::optional<double> memory_total_bytes;
  std::optional<double> power_limit_watts;
  // How energy_joules is obtained: "counter" (the driver's energy counter),
  // "integrated" (power integrated over time), or "none".
  std::string energy_source = "none";
  bool mig_enabled = false;  // a whole GPU in MIG mode
};

// One compute process on a unit, as the driver reports it.
struct GpuProcessUse {
  int pid = 0;                         // in the host PID namespace
  std::optional<double> memory_bytes;  // absent when the driver does not say
};

// A process's SM utilisation over the interval since the previous read.
struct GpuProcessUtil {
  int pid = 0;
  double sm_ratio = 0;
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  virtual std::string_view name() const = 0;  // "nvml"
  // Library and driver versions for meta.json and `check`.
  virtual GpuDriverInfo DriverInfo() const = 0;
  // Every unit, whole GPUs in the library's order, each followed by its MIG slices.
  virtual const std::vector<GpuUnit>& units() const = 0;

  // Reads unit `u`'s device metrics into *out (identity fields are the
  // caller's). Slow-moving values (fan, ECC, GPM) are read on row ticks only.
  virtual void ReadDevice(size_t u, const Tick& tick, GpuSample* out) = 0;
  // Compute processes on unit `u`; false when the list could not be read.
  virtual bool ReadProcesses(size_t u, std::vector<GpuProcessUse>* out) = 0;
  // Per-process SM utilisation since the previous call; false when unknown.
  // An empty list with true means no process ran kernels. An expensive call:
  // made when ProcessUtilizationDue says so.
  virtual bool ReadProcessUtilization(size_t u, std::vector<GpuProcessUtil>* out) = 0;
  // Whether this tick (after ReadDevice of it) is the one for unit `u`'s
  // per-process read. The backend keeps the schedule, so that its expensive
  // calls take turns and no single tick makes them all.
  virtual bool ProcessUtilizationDue(size_t /*u*/, const Tick& tick) const { return tick.row_tick; }

  // Whether unit `u` fell off the bus (NVML GPU_IS_LOST); a lost unit is not read again.
  virtual bool lost(size_t u) const = 0;
  // Which metric groups worked on unit `u` so far: {"power": "ok", "fan": "not supported", ...}.
  virtual nlohmann::json Support(size_t u) const = 0;
  // Problems worth saying once (a missing permission), appended since the last call.
  virtual void TakeNotices(std::vector<Notice>* out) = 0;
};

}  // namespace tv

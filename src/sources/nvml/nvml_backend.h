// NvmlBackend: the GpuBackend over NVIDIA's NVML. Handles are fetched once at
// open and cached; each metric group is tried once per unit and switched off
// where the device or driver lacks it (see MetricGate). The driver's own sample
// buffers (nvmlDeviceGetSamples) are read between ticks so a burst shorter than
// the tick period still reaches the row max.
//
// The implementation is split by concern: nvml_backend.cc (open, enumeration,
// static info), nvml_device.cc (device metrics), nvml_processes.cc, nvml_gpm.cc,
// nvml_mig.cc. Not thread-safe: the sampler thread only.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "sources/gpu_backend.h"
#include "sources/nvml/nvml_gate.h"
#include "sources/nvml/nvml_lib.h"

namespace tv {

struct NvmlOptions {
  std::string library;  // empty: $TRAINVITALS_NVML_LIBRARY, else libnvidia-ml.so.1
  bool mig = true;      // enumerate MIG slices
};

// Per-unit GPM state: two samples, the older one kept between rows.
struct NvmlGpmState {
  bool supported = false;
  nvmlGpmSample_t prev = nullptr;
  nvmlGpmSample_t cur = nullptr;
  bool have_prev = false;
  double prev_mono_s = 0;
  std::unique_ptr<nvmlGpmMetricsGet_t> request;  // 13 kB: on the heap, reused
};

// Energy since monitoring began: the driver's counter, read every
// kEnergyCounterEvery_s (about 4 ms a call on an H200), plus power integrated
// since that read; without a counter, power integrated from the start.
struct NvmlEnergy {
  std::optional<double> first_counter_j;
  double counter_j = 0;        // at the last counter read, since the first
  double since_counter_j = 0;  // power integrated since the last counter read
  double last_mono_s = -1;
  double next_counter_s = 0;
};

// Driver calls that cost milliseconds on an H200 (driver 580), made less often
// than every row so that watching a GPU stays well under 0.3 ms a tick:
inline constexpr double kEnergyCounterEvery_s = 10;
inline constexpr double kEnergyCounterRetry_s = 1;  // after a failed read
// Per-process SM use (nvmlDeviceGetProcessUtilization, about 2.4 ms).
inline constexpr double kProcessUtilEvery_s = 5;
inline constexpr double kProcessUtilRetry_s = 1;  // after a failed or priming read
// The driver's utilisation buffer (about 2.5 ms) holds one value per 1/6 s;
// polls closer together than this already see every value, so it is read only
// when ticks are further apart.
inline constexpr double kUtilBufferWhenTicksOver_s = 0.15;

struct NvmlUnitState {
  nvmlDevice_t handle = nullptr;
  nvmlDevice_t parent_handle = nullptr;  // MIG slices: the GPU's handle (GPM)
  MetricGate gate;
  unsigned long long last_util_ts = 0;  // driver sample buffers: last seen, microseconds
  unsigned long long last_power_ts = 0;
  unsigned long long last_proc_ts = 0;
  bool util_primed = false, power_primed = false, proc_primed = false;
  NvmlEnergy energy;
  double last_tick_s = -1;  // mono time of the previous tick
  double tick_gap_s = 0;
  // Expensive calls on a schedule (the energy counter, per-process
  // utilisation) take turns: at most one a tick, and not on a row tick (which
  // reads the sample buffers and GPM) when there are plain ticks between rows.
  bool plain_ticks = false;      // a tick that closes no row was seen
  double next_proc_util_s = -1;  // <0: a second after the first tick
  bool energy_turn = false;      // this tick reads the energy counter
  bool proc_util_turn = false;   // this tick reads per-process utilisation
  NvmlGpmState gpm;
  int proc_version = 3;  // compute-process call in use: 3, 2, 1; 0 = none
  std::vector<nvmlProcessInfo_v2_t> procs;
  std::vector<nvmlProcessInfo_v1_t> procs_v1;
  std::vector<nvmlSample_t> samples;
  std::vector<nvmlProcessUtilizationSample_t> proc_samples;
};

class NvmlBackend final : public GpuBackend {
 public:
  // Loads NVML and enumerates the units. nullptr with *status explaining why
  // (one sentence for the user) when there is no library, no driver, or no GPU.
  static std::unique_ptr<NvmlBackend> Open(const NvmlOptions& options, Status* status,
                                           std::string* detail = nullptr);
  ~NvmlBackend() override;

  std::string_view name() const override { return "nvml"; }
  GpuDriverInfo DriverInfo() const override;
  const std::vector<GpuUnit>& units() const override { return units_; }
  void ReadDevice(size_t u, const Tick& tick, GpuSample* out) override;
  bool ReadProcesses(size_t u, std::vector<GpuProcessUse>* out) override;
  bool ReadProcessUtilization(size_t u, std::vector<GpuProcessUtil>* out) override;
  bool ProcessUtilizationDue(size_t u, const Tick& /*tick*/) const override {
    return state_[u].proc_util_turn;
  }
  bool lost(size_t u) const override { return state_[u].gate.lost(); }
  nlohmann::json Support(size_t u) const override;
  void TakeNotices(std::vector<Notice>* out) override;

  const NvmlLib& lib() const { return *lib_; }
  // The mean busy share of unit `u` over the driver's utilisation samples of
  // the last `window_s` seconds (its buffer's history, from before this
  // process too); nullopt when the buffer holds none or cannot be read.
  std::optional<double> RecentUtilization(size_t u, double window_s);

 private:
  explicit NvmlBackend(std::unique_ptr<NvmlLib> lib) : lib_(std::move(lib)) {}
  void AddGpu(unsigned index, nvmlDevice_t handle, bool mig);
  void FillStatic(GpuUnit* unit, NvmlUnitState* st);
  void ProbeEnergySource(GpuUnit* unit, NvmlUnitState* st);
  // nvml_mig.cc
  void AddMigSlices(size_t parent);
  // nvml_device.cc
  void ReadBuffered(NvmlUnitState* st, nvmlSamplingType_t type, double scale,
                    std::optional<double>* mean, std::optional<double>* peak);
  void ReadEnergy(NvmlUnitState* st, const Tick& tick, GpuSample* out);
  void ReadSlow(NvmlUnitState* st, GpuSample* out);
  // Which scheduled expensive read, if any, this tick makes (see NvmlUnitState):
  // the one due longest, the energy counter's first read before all.
  static void Schedule(NvmlUnitState* st, const Tick& tick);
  // nvml_processes.cc
  bool ReadProcessUtilizationNow(size_t u, std::vector<GpuProcessUtil>* out);
  // nvml_gpm.cc
  void InitGpm(size_t u);
  void ReadGpm(size_t u, const Tick& tick, GpuSample* out);
  void FreeGpm(NvmlUnitState* st);

  std::unique_ptr<NvmlLib> lib_;
  std::vector<GpuUnit> units_;
  std::vector<NvmlUnitState> state_;  // parallel to units_
};

}  // namespace tv

// GpuSample: what one GPU (or one MIG instance of it) showed at one instant, in
// SI base units. Filled by a GPU backend (src/sources/nvml) through GpuSource;
// every field is optional because every metric may be unsupported on a given
// device or driver, or fail: an unknown value is absent, never 0.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tv {

// At most this many of a GPU's compute processes are kept per sample and shown
// per GPU on /metrics: those with the most device memory (bounds cardinality).
inline constexpr size_t kGpuTopProcesses = 8;

// One compute process on a GPU.
struct GpuProcess {
  int pid = 0;                          // in the host PID namespace, as the driver reports it
  std::string name;                     // /proc/<pid>/comm (at most 15 bytes); empty: unknown
  bool is_job = false;                  // in the job's process tree
  std::optional<double> memory_bytes;   // absent when the driver does not say
  std::optional<double> sm_util_ratio;  // from the latest per-process utilisation read
};

// A fixed-capacity list (no allocation per tick), in descending memory order.
struct GpuProcessList {
  std::array<GpuProcess, kGpuTopProcesses> items;
  size_t size = 0;
  bool known = false;  // whether the driver listed the processes at all

  const GpuProcess* begin() const { return items.data(); }
  const GpuProcess* end() const { return items.data() + size; }
};

struct GpuSample {
  int index = 0;           // as the framework numbers it (CUDA_VISIBLE_DEVICES order)
  int physical_index = 0;  // NVML's index
  int mig_instance = -1;   // GPU instance id of a MIG slice; -1 for the whole GPU
  // The unit's UUID ("GPU-..." or "MIG-..."), for joining figures that name it;
  // it points into the GPU source's unit table, which outlives every sample.
  std::string_view uuid;

  std::optional<double> util_ratio;
  // Highest driver-buffered value seen since the previous tick (nvmlDeviceGetSamples);
  // the aggregator folds it into the row max so no short burst is missed.
  std::optional<double> util_ratio_peak;
  std::optional<double> memory_util_ratio;
  std::optional<double> memory_used_bytes;
  std::optional<double> memory_total_bytes;
  std::optional<double> memory_reserved_bytes;
  std::optional<double> temperature_celsius;
  std::optional<double> power_watts;
  std::optional<double> power_watts_peak;  // as util_ratio_peak, for TOTAL_POWER
  std::optional<double> power_limit_watts;
  std::optional<double> energy_joules;  // since monitoring began
  std::optional<double> sm_clock_hertz;
  std::optional<double> memory_clock_hertz;
  // Clock-event (throttle) reasons as 0/1 gauges: their row mean is the fraction
  // of the interval spent throttled for that reason.
  std::optional<double> throttle_power_ratio;
  std::optional<double> throttle_thermal_ratio;
  std::optional<double> throttle_hw_slowdown_ratio;
  std::optional<double> throttle_any_ratio;
  std::optional<uint64_t> clock_event_reasons;  // raw bits, for views (not in the table)
  std::optional<double> pcie_tx_bytes_per_second;
  std::optional<double> pcie_rx_bytes_per_second;
  std::optional<double> fan_ratio;
  std::optional<double> performance_state;       // P0 = 0 (fastest) .. P15
  std::optional<double> ecc_corrected_errors;    // volatile counter since driver load
  std::optional<double> ecc_uncorrected_errors;  // volatile counter since driver load

  // The job's share, from the device's compute processes.
  std::optional<double> job_memory_bytes;
  std::optional<double> job_sm_util_ratio;
  std::optional<double> job_processes;
  std::optional<double> other_memory_bytes;  // processes outside the job
  std::optional<double> other_processes;
  GpuProcessList processes;  // the top kGpuTopProcesses by memory

  // The training framework's allocator on this device (markers), summed over
  // the processes that use it.
  std::optional<double> allocator_allocated_bytes;
  std::optional<double> allocator_reserved_bytes;
  std::optional<double> allocator_peak_bytes;

  // GPM (Hopper and later), read once per row over the row's interval.
  std::optional<double> sm_active_ratio;
  std::optional<double> sm_occupancy_ratio;
  std::optional<double> tensor_active_ratio;
  std::optional<double> dram_active_ratio;
  std::optional<double> gpm_pcie_tx_bytes_per_second;
  std::optional<double> gpm_pcie_rx_bytes_per_second;
  std::optional<double> nvlink_tx_bytes_per_second;
  std::optional<double> nvlink_rx_bytes_per_second;
};

}  // namespace tv

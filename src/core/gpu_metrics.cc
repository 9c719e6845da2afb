// The per-GPU part of the metric table (see metrics.h). docs/gpus.md lists the
// NVML call behind each entry.
#include <array>

#include "core/metrics.h"

namespace tv {
namespace {

#define GPU(field) [](const GpuSample& g) -> std::optional<double> { return g.field; }

constexpr auto kGpuScope = Scope::kGpu;
constexpr auto kG = Kind::kGauge;

constexpr std::array kGpuMetrics = {
    MetricDef{kGpuScope, "util_ratio", Unit::kRatio, kG, true,
              "Fraction of time a kernel ran (NVML utilization.gpu); the max includes the "
              "driver's buffered samples between ticks.",
              nullptr, GPU(util_ratio), GPU(util_ratio_peak)},
    MetricDef{kGpuScope, "memory_util_ratio", Unit::kRatio, kG, true,
              "Fraction of time device memory was read or written.", nullptr,
              GPU(memory_util_ratio)},
    MetricDef{kGpuScope, "memory_used_bytes", Unit::kBytes, kG, true,
              "Device memory in use by all processes.", nullptr, GPU(memory_used_bytes)},
    MetricDef{kGpuScope, "memory_total_bytes", Unit::kBytes, kG, false, "Device memory.", nullptr,
              GPU(memory_total_bytes)},
    MetricDef{kGpuScope, "memory_reserved_bytes", Unit::kBytes, kG, false,
              "Device memory reserved by the driver and firmware.", nullptr,
              GPU(memory_reserved_bytes)},
    MetricDef{kGpuScope, "job_memory_bytes", Unit::kBytes, kG, true,
              "Device memory used by the job's processes.", nullptr, GPU(job_memory_bytes), nullptr,
              /*keep_min=*/true},
    MetricDef{kGpuScope, "job_sm_util_ratio", Unit::kRatio, kG, true,
              "SM utilisation of the job's processes over the last row (per-process samples).",
              nullptr, GPU(job_sm_util_ratio)},
    MetricDef{kGpuScope, "job_processes", Unit::kCount, kG, true,
              "The job's processes with a context on this GPU.", nullptr, GPU(job_processes)},
    MetricDef{kGpuScope, "other_memory_bytes", Unit::kBytes, kG, true,
              "Device memory used by processes outside the job.", nullptr, GPU(other_memory_bytes)},
    MetricDef{kGpuScope, "other_processes", Unit::kCount, kG, true,
              "Processes outside the job with a context on this GPU.", nullptr,
              GPU(other_processes)},
    MetricDef{kGpuScope, "allocator_allocated_bytes", Unit::kBytes, kG, true,
              "Memory the training framework's allocator handed out on this device (markers: "
              "PyTorch allocated_bytes, TensorFlow current, Paddle memory_allocated).",
              nullptr, GPU(allocator_allocated_bytes), nullptr, /*keep_min=*/true},
    MetricDef{kGpuScope, "allocator_reserved_bytes", Unit::kBytes, kG, true,
              "Memory the framework's allocator holds from the driver, cached blocks included "
              "(PyTorch reserved_bytes, Paddle memory_reserved).",
              nullptr, GPU(allocator_reserved_bytes), nullptr, /*keep_min=*/true},
    MetricDef{kGpuScope, "allocator_peak_bytes", Unit::kBytes, kG, true,
              "The allocator's own peak of allocated memory since the process started.", nullptr,
              GPU(allocator_peak_bytes)},
    MetricDef{kGpuScope, "temperature_celsius", Unit::kCelsius, kG, true, "GPU core temperature.",
              nullptr, GPU(temperature_celsius)},
    MetricDef{kGpuScope, "power_watts", Unit::kWatts, kG, true,
              "Board power draw; the max includes the driver's buffered samples.", nullptr,
              GPU(power_watts), GPU(power_watts_peak)},
    MetricDef{kGpuScope, "power_limit_watts", Unit::kWatts, kG, false, "Enforced power limit.",
              nullptr, GPU(power_limit_watts)},
    MetricDef{kGpuScope, "energy_joules", Unit::kJoules, Kind::kCounter, false,
              "Board energy since monitoring began (driver counter, else integrated power; "
              "see meta.json energy_source).",
              nullptr, GPU(energy_joules)},
    MetricDef{kGpuScope, "sm_clock_hertz", Unit::kHertz, kG, true, "SM clock.", nullptr,
              GPU(sm_clock_hertz)},
    MetricDef{kGpuScope, "memory_clock_hertz", Unit::kHertz, kG, true, "Memory clock.", nullptr,
              GPU(memory_clock_hertz)},
    MetricDef{kGpuScope, "throttle_power_ratio", Unit::kRatio, kG, false,
              "Fraction of time clocks were held down by the software power cap.", nullptr,
              GPU(throttle_power_ratio)},
    MetricDef{kGpuScope, "throttle_thermal_ratio", Unit::kRatio, kG, false,
              "Fraction of time clocks were held down for temperature (software or hardware).",
              nullptr, GPU(throttle_thermal_ratio)},
    MetricDef{kGpuScope, "throttle_hw_slowdown_ratio", Unit::kRatio, kG, false,
              "Fraction of time in hardware slowdown or power brake.", nullptr,
              GPU(throttle_hw_slowdown_ratio)},
    MetricDef{kGpuScope, "throttle_any_ratio", Unit::kRatio, kG, false,
              "Fraction of time clocks were held down for any reason but idleness.", nullptr,
              GPU(throttle_any_ratio)},
    MetricDef{kGpuScope, "pcie_tx_bytes_per_second", Unit::kBytesPerSecond, kG, true,
              "PCIe bytes sent by the GPU (20 ms window).", nullptr, GPU(pcie_tx_bytes_per_second)},
    MetricDef{kGpuScope, "pcie_rx_bytes_per_second", Unit::kBytesPerSecond, kG, true,
              "PCIe bytes received by the GPU (20 ms window).", nullptr,
              GPU(pcie_rx_bytes_per_second)},
    MetricDef{kGpuScope, "fan_ratio", Unit::kRatio, kG, false,
              "Fan speed as a fraction of its maximum.", nullptr, GPU(fan_ratio)},
    MetricDef{kGpuScope, "performance_state", Unit::kNone, kG, true,
              "Performance state: 0 (P0, fastest) to 15.", nullptr, GPU(performance_state)},
    MetricDef{kGpuScope, "ecc_corrected_errors", Unit::kCount, Kind::kCounter, false,
              "Corrected ECC errors since the driver loaded (volatile counter).", nullptr,
              GPU(ecc_corrected_errors)},
    MetricDef{kGpuScope, "ecc_uncorrected_errors", Unit::kCount, Kind::kCounter, false,
              "Uncorrected ECC errors since the driver loaded (volatile counter).", nullptr,
              GPU(ecc_uncorrected_errors)},
    MetricDef{kGpuScope, "sm_active_ratio", Unit::kRatio, kG, true,
              "GPM: fraction of time a warp was resident, averaged over SMs.", nullptr,
              GPU(sm_active_ratio)},
    MetricDef{kGpuScope, "sm_occupancy_ratio", Unit::kRatio, kG, true,
              "GPM: resident warps over the SMs' maximum.", nullptr, GPU(sm_occupancy_ratio)},
    MetricDef{kGpuScope, "tensor_active_ratio", Unit::kRatio, kG, true,
              "GPM: fraction of time any tensor pipe was active.", nullptr,
              GPU(tensor_active_ratio)},
    MetricDef{kGpuScope, "dram_active_ratio", Unit::kRatio, kG, true,
              "GPM: DRAM bandwidth used over its peak.", nullptr, GPU(dram_active_ratio)},
    MetricDef{kGpuScope, "gpm_pcie_tx_bytes_per_second", Unit::kBytesPerSecond, kG, true,
              "GPM: PCIe bytes sent over the row.", nullptr, GPU(gpm_pcie_tx_bytes_per_second)},
    MetricDef{kGpuScope, "gpm_pcie_rx_bytes_per_second", Unit::kBytesPerSecond, kG, true,
              "GPM: PCIe bytes received over the row.", nullptr, GPU(gpm_pcie_rx_bytes_per_second)},
    MetricDef{kGpuScope, "nvlink_tx_bytes_per_second", Unit::kBytesPerSecond, kG, true,
              "GPM: NVLink bytes sent, all links.", nullptr, GPU(nvlink_tx_bytes_per_second)},
    MetricDef{kGpuScope, "nvlink_rx_bytes_per_second", Unit::kBytesPerSecond, kG, true,
              "GPM: NVLink bytes received, all links.", nullptr, GPU(nvlink_rx_bytes_per_second)},
};

#undef GPU

}  // namespace

std::span<const MetricDef> GpuMetrics() { return kGpuMetrics; }

namespace metric {
constexpr MetricId kGpuUtilRatio = ResolveMetric(kGpuMetrics, true, kGpuScope, "util_ratio");
constexpr MetricId kGpuMemoryUsedBytes =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "memory_used_bytes");
constexpr MetricId kGpuMemoryTotalBytes =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "memory_total_bytes");
constexpr MetricId kGpuJobMemoryBytes =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "job_memory_bytes");
constexpr MetricId kGpuAllocatorPeakBytes =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "allocator_peak_bytes");
constexpr MetricId kGpuTemperatureCelsius =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "temperature_celsius");
constexpr MetricId kGpuPowerWatts = ResolveMetric(kGpuMetrics, true, kGpuScope, "power_watts");
constexpr MetricId kGpuEnergyJoules = ResolveMetric(kGpuMetrics, true, kGpuScope, "energy_joules");
constexpr MetricId kGpuAllocatorAllocatedBytes =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "allocator_allocated_bytes");
constexpr MetricId kGpuAllocatorReservedBytes =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "allocator_reserved_bytes");
constexpr MetricId kGpuSmActiveRatio =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "sm_active_ratio");
constexpr MetricId kGpuJobProcesses = ResolveMetric(kGpuMetrics, true, kGpuScope, "job_processes");
constexpr MetricId kGpuOtherProcesses =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "other_processes");
constexpr MetricId kGpuThrottleAnyRatio =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "throttle_any_ratio");
constexpr MetricId kGpuThrottlePowerRatio =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "throttle_power_ratio");
constexpr MetricId kGpuThrottleThermalRatio =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "throttle_thermal_ratio");
constexpr MetricId kGpuThrottleHwSlowdownRatio =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "throttle_hw_slowdown_ratio");
constexpr MetricId kGpuJobSmUtilRatio =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "job_sm_util_ratio");
constexpr MetricId kGpuOtherMemoryBytes =
    ResolveMetric(kGpuMetrics, true, kGpuScope, "other_memory_bytes");
}  // namespace metric

}  // namespace tv

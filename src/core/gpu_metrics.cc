// The per-GPU part of the metric table (see metrics.h). docs/gpus.md lists the
// NVML call behind each entry.
#include <array>

#include "core/metrics.h"

namespace tv {
namespace {

#define GPU(field) [](const GpuSample& g) -> std::optional<double> { return g.field; }

constexpr auto G = Scope::kGpu;
constexpr auto kG = Kind::kGauge;

constexpr std::array kGpuMetrics = {
    MetricDef{G, "util_ratio", Unit::kRatio, kG, true,
              "Fraction of time a kernel ran (NVML utilization.gpu); the max includes the "
              "driver's buffered samples between ticks.",
              nullptr, GPU(util_ratio), GPU(util_ratio_peak)},
    MetricDef{G, "memory_util_ratio", Unit::kRatio, kG, true,
              "Fraction of time device memory was read or written.", nullptr,
              GPU(memory_util_ratio)},
    MetricDef{G, "memory_used_bytes", Unit::kBytes, kG, true,
              "Device memory in use by all processes.", nullptr, GPU(memory_used_bytes)},
    MetricDef{G, "memory_total_bytes", Unit::kBytes, kG, false, "Device memory.", nullptr,
              GPU(memory_total_bytes)},
    MetricDef{G, "memory_reserved_bytes", Unit::kBytes, kG, false,
              "Device memory reserved by the driver and firmware.", nullptr,
              GPU(memory_reserved_bytes)},
    MetricDef{G, "job_memory_bytes", Unit::kBytes, kG, true,
              "Device memory used by the job's processes.", nullptr, GPU(job_memory_bytes), nullptr,
              /*keep_min=*/true},
    MetricDef{G, "job_sm_util_ratio", Unit::kRatio, kG, true,
              "SM utilisation of the job's processes over the last row (per-process samples).",
              nullptr, GPU(job_sm_util_ratio)},
    MetricDef{G, "job_processes", Unit::kCount, kG, true,
              "The job's processes with a context on this GPU.", nullptr, GPU(job_processes)},
    MetricDef{G, "other_memory_bytes", Unit::kBytes, kG, true,
              "Device memory used by processes outside the job.", nullptr, GPU(other_memory_bytes)},
    MetricDef{G, "other_processes", Unit::kCount, kG, true,
              "Processes outside the job with a context on this GPU.", nullptr,
              GPU(other_processes)},
    MetricDef{G, "allocator_allocated_bytes", Unit::kBytes, kG, true,
              "Memory the training framework's allocator handed out on this device (markers: "
              "PyTorch allocated_bytes, TensorFlow current, Paddle memory_allocated).",
              nullptr, GPU(allocator_allocated_bytes), nullptr, /*keep_min=*/true},
    MetricDef{G, "allocator_reserved_bytes", Unit::kBytes, kG, true,
              "Memory the framework's allocator holds from the driver, cached blocks included "
              "(PyTorch reserved_bytes, Paddle memory_reserved).",
              nullptr, GPU(allocator_reserved_bytes), nullptr, /*keep_min=*/true},
    MetricDef{G, "allocator_peak_bytes", Unit::kBytes, kG, true,
              "The allocator's own peak of allocated memory since the process started.", nullptr,
              GPU(allocator_peak_bytes)},
    MetricDef{G, "temperature_celsius", Unit::kCelsius, kG, true, "GPU core temperature.", nullptr,
              GPU(temperature_celsius)},
    MetricDef{G, "power_watts", Unit::kWatts, kG, true,
              "Board power draw; the max includes the driver's buffered samples.", nullptr,
              GPU(power_watts), GPU(power_watts_peak)},
    MetricDef{G, "power_limit_watts", Unit::kWatts, kG, false, "Enforced power limit.", nullptr,
              GPU(power_limit_watts)},
    MetricDef{G, "energy_joules", Unit::kJoules, Kind::kCounter, false,
              "Board energy since monitoring began (driver counter, else integrated power; "
              "see meta.json energy_source).",
              nullptr, GPU(energy_joules)},
    MetricDef{G, "sm_clock_hertz", Unit::kHertz, kG, true, "SM clock.", nullptr,
              GPU(sm_clock_hertz)},
    MetricDef{G, "memory_clock_hertz", Unit::kHertz, kG, true, "Memory clock.", nullptr,
              GPU(memory_clock_hertz)},
    MetricDef{G, "throttle_power_ratio", Unit::kRatio, kG, false,
              "Fraction of time clocks were held down by the software power cap.", nullptr,
              GPU(throttle_power_ratio)},
    MetricDef{G, "throttle_thermal_ratio", Unit::kRatio, kG, false,
              "Fraction of time clocks were held down for temperature (software or hardware).",
              nullptr, GPU(throttle_thermal_ratio)},
    MetricDef{G, "throttle_hw_slowdown_ratio", Unit::kRatio, kG, false,
              "Fraction of time in hardware slowdown or power brake.", nullptr,
              GPU(throttle_hw_slowdown_ratio)},
    MetricDef{G, "throttle_any_ratio", Unit::kRatio, kG, false,
              "Fraction of time clocks were held down for any reason but idleness.", nullptr,
              GPU(throttle_any_ratio)},
    MetricDef{G, "pcie_tx_bytes_per_second", Unit::kBytesPerSecond, kG, true,
              "PCIe bytes sent by the GPU (20 ms window).", nullptr, GPU(pcie_tx_bytes_per_second)},
    MetricDef{G, "pcie_rx_bytes_per_second", Unit::kBytesPerSecond, kG, true,
              "PCIe bytes received by the GPU (20 ms window).", nullptr,
              GPU(pcie_rx_bytes_per_second)},
    MetricDef{G, "fan_ratio", Unit::kRatio, kG, false, "Fan speed as a fraction of its maximum.",
              nullptr, GPU(fan_ratio)},
    MetricDef{G, "performance_state", Unit::kNone, kG, true,
              "Performance state: 0 (P0, fastest) to 15.", nullptr, GPU(performance_state)},
    MetricDef{G, "ecc_corrected_errors", Unit::kCount, Kind::kCounter, false,
              "Corrected ECC errors since the driver loaded (volatile counter).", nullptr,
              GPU(ecc_corrected_errors)},
    MetricDef{G, "ecc_uncorrected_errors", Unit::kCount, Kind::kCounter, false,
              "Uncorrected ECC errors since the driver loaded (volatile counter).", nullptr,
              GPU(ecc_uncorrected_errors)},
    MetricDef{G, "sm_active_ratio", Unit::kRatio, kG, true,
              "GPM: fraction of time a warp was resident, averaged over SMs.", nullptr,
              GPU(sm_active_ratio)},
    MetricDef{G, "sm_occupancy_ratio", Unit::kRatio, kG, true,
              "GPM: resident warps over the SMs' maximum.", nullptr, GPU(sm_occupancy_ratio)},
    MetricDef{G, "tensor_active_ratio", Unit::kRatio, kG, true,
              "GPM: fraction of time any tensor pipe was active.", nullptr,
              GPU(tensor_active_ratio)},
    MetricDef{G, "dram_active_ratio", Unit::kRatio, kG, true,
              "GPM: DRAM bandwidth used over its peak.", nullptr, GPU(dram_active_ratio)},
    MetricDef{G, "gpm_pcie_tx_bytes_per_second", Unit::kBytesPerSecond, kG, true,
              "GPM: PCIe bytes sent over the row.", nullptr, GPU(gpm_pcie_tx_bytes_per_second)},
    MetricDef{G, "gpm_pcie_rx_bytes_per_second", Unit::kBytesPerSecond, kG, true,
              "GPM: PCIe bytes received over the row.", nullptr, GPU(gpm_pcie_rx_bytes_per_second)},
    MetricDef{G, "nvlink_tx_bytes_per_second", Unit::kBytesPerSecond, kG, true,
              "GPM: NVLink bytes sent, all links.", nullptr, GPU(nvlink_tx_bytes_per_second)},
    MetricDef{G, "nvlink_rx_bytes_per_second", Unit::kBytesPerSecond, kG, true,
              "GPM: NVLink bytes received, all links.", nullptr, GPU(nvlink_rx_bytes_per_second)},
};

#undef GPU

}  // namespace

std::span<const MetricDef> GpuMetrics() { return kGpuMetrics; }

namespace metric {
constexpr MetricId kGpuUtilRatio = ResolveMetric(kGpuMetrics, true, G, "util_ratio");
constexpr MetricId kGpuMemoryUsedBytes = ResolveMetric(kGpuMetrics, true, G, "memory_used_bytes");
constexpr MetricId kGpuMemoryTotalBytes = ResolveMetric(kGpuMetrics, true, G, "memory_total_bytes");
constexpr MetricId kGpuJobMemoryBytes = ResolveMetric(kGpuMetrics, true, G, "job_memory_bytes");
constexpr MetricId kGpuAllocatorPeakBytes =
    ResolveMetric(kGpuMetrics, true, G, "allocator_peak_bytes");
constexpr MetricId kGpuTemperatureCelsius =
    ResolveMetric(kGpuMetrics, true, G, "temperature_celsius");
constexpr MetricId kGpuPowerWatts = ResolveMetric(kGpuMetrics, true, G, "power_watts");
constexpr MetricId kGpuEnergyJoules = ResolveMetric(kGpuMetrics, true, G, "energy_joules");
constexpr MetricId kGpuAllocatorAllocatedBytes =
    ResolveMetric(kGpuMetrics, true, G, "allocator_allocated_bytes");
constexpr MetricId kGpuAllocatorReservedBytes =
    ResolveMetric(kGpuMetrics, true, G, "allocator_reserved_bytes");
constexpr MetricId kGpuSmActiveRatio = ResolveMetric(kGpuMetrics, true, G, "sm_active_ratio");
constexpr MetricId kGpuJobProcesses = ResolveMetric(kGpuMetrics, true, G, "job_processes");
constexpr MetricId kGpuOtherProcesses = ResolveMetric(kGpuMetrics, true, G, "other_processes");
constexpr MetricId kGpuThrottleAnyRatio = ResolveMetric(kGpuMetrics, true, G, "throttle_any_ratio");
constexpr MetricId kGpuThrottlePowerRatio =
    ResolveMetric(kGpuMetrics, true, G, "throttle_power_ratio");
constexpr MetricId kGpuThrottleThermalRatio =
    ResolveMetric(kGpuMetrics, true, G, "throttle_thermal_ratio");
constexpr MetricId kGpuThrottleHwSlowdownRatio =
    ResolveMetric(kGpuMetrics, true, G, "throttle_hw_slowdown_ratio");
constexpr MetricId kGpuJobSmUtilRatio = ResolveMetric(kGpuMetrics, true, G, "job_sm_util_ratio");
constexpr MetricId kGpuOtherMemoryBytes = ResolveMetric(kGpuMetrics, true, G, "other_memory_bytes");
}  // namespace metric

}  // namespace tv

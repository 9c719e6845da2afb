// The per-GPU part of the metric table (see metrics.h).
#include <array>

#include "core/metrics.h"

namespace tv {
namespace {

#define GPU(field) [](const GpuSample& g) -> std::optional<double> { return g.field; }

const std::array kGpuMetrics = {
    MetricDef{Scope::kGpu, "util_ratio", Unit::kRatio, Kind::kGauge, true,
              "Fraction of time a kernel ran (NVML utilization.gpu).", nullptr, GPU(util_ratio)},
    MetricDef{Scope::kGpu, "memory_util_ratio", Unit::kRatio, Kind::kGauge, true,
              "Fraction of time device memory was read or written.", nullptr,
              GPU(memory_util_ratio)},
    MetricDef{Scope::kGpu, "memory_used_bytes", Unit::kBytes, Kind::kGauge, true,
              "Device memory in use by all processes.", nullptr, GPU(memory_used_bytes)},
    MetricDef{Scope::kGpu, "memory_total_bytes", Unit::kBytes, Kind::kGauge, false,
              "Device memory.", nullptr, GPU(memory_total_bytes)},
    MetricDef{Scope::kGpu, "job_memory_bytes", Unit::kBytes, Kind::kGauge, true,
              "Device memory used by the job's processes.", nullptr, GPU(job_memory_bytes)},
    MetricDef{Scope::kGpu, "temperature_celsius", Unit::kCelsius, Kind::kGauge, true,
              "GPU core temperature.", nullptr, GPU(temperature_celsius)},
    MetricDef{Scope::kGpu, "power_watts", Unit::kWatts, Kind::kGauge, true,
              "Board power draw.", nullptr, GPU(power_watts)},
};

#undef GPU

}  // namespace

std::span<const MetricDef> GpuMetrics() { return kGpuMetrics; }

}  // namespace tv

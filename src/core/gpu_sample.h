// GpuSample: what one GPU showed at one instant, in SI base units. Filled by a
// GPU backend (src/sources/nvml); every field is optional because every metric
// may be unsupported on a given device or driver.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tv {

struct GpuSample {
  int index = 0;           // as the framework numbers it (CUDA_VISIBLE_DEVICES order)
  int physical_index = 0;  // NVML's index
  std::optional<double> util_ratio;
  std::optional<double> memory_util_ratio;
  std::optional<double> memory_used_bytes;
  std::optional<double> memory_total_bytes;
  std::optional<double> temperature_celsius;
  std::optional<double> power_watts;
  std::optional<double> job_memory_bytes;
};

}  // namespace tv

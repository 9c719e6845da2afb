// Which GPUs are the freest: the ranking behind `trainvitals pick`. A GPU
// qualifies when it has at least the free memory asked for and was at most
// the busy share allowed over the sampling window; the qualifying ones are
// ranked by how free they are, the share of memory free times the share of
// time idle (in whole percent, so noise does not reorder them), then by free
// bytes. A GPU with no busy share from the driver (a MIG slice) and no compute
// process on it counts as idle.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/gpu_candidate.h"

namespace tv {

struct PickRules {
  int count = 1;
  double min_free_bytes = 0;
  double max_busy_ratio = 1.0;
};

struct PickResult {
  std::vector<GpuCandidate> chosen;  // the freest first
  // Each GPU that did not qualify, with why ("GPU 1: 95 % busy, over 10 %").
  std::vector<std::string> rejected;
};

PickResult PickGpus(std::vector<GpuCandidate> candidates, const PickRules& rules);

// The value of CUDA_VISIBLE_DEVICES for `chosen`: NVML indexes for whole GPUs
// (with CUDA_DEVICE_ORDER=PCI_BUS_ID they mean the same GPUs to CUDA), UUIDs
// for MIG slices.
std::string VisibleDevices(const std::vector<GpuCandidate>& chosen);

}  // namespace tv

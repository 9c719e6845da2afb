// A busy training row for the benchmarks of what runs on the sampler thread
// per row (findings, alerts).
#pragma once

#include "core/aggregator.h"
#include "core/row.h"

namespace tv {

inline constexpr double kStart = 1700000000;

// A busy training row: `gpus` GPUs, each with 8 of the job's 64 processes.
inline Row TrainingRow(int gpus, double t) {
  Aggregator agg;
  Sample s;
  s.t = t;
  s.host.cpu_util_ratio = 0.6;
  s.host.cpu_iowait_ratio = 0.01;
  s.host.swap_used_bytes = 0;
  s.job.processes = 64;
  s.job.cpu_util_ratio = 0.5;
  s.job.memory_util_ratio = 0.4;
  s.job.memory_bytes = 2e9;
  s.host.memory_available_bytes = 100e9;
  s.host.memory_limit_bytes = 200e9;
  s.host.cgroup_memory_current_bytes = 50e9;
  s.training.steps = (t - kStart) * 10;
  s.training.steps_per_second = 10;
  s.training.data_wait_ratio = 0.03;
  s.training.phase = "train";
  for (int g = 0; g < gpus; ++g) {
    GpuSample gpu;
    gpu.index = g;
    gpu.util_ratio = 0.9;
    gpu.sm_active_ratio = 0.7;
    gpu.memory_used_bytes = 40e9;
    gpu.memory_total_bytes = 80e9;
    gpu.job_memory_bytes = 39e9;
    gpu.allocator_allocated_bytes = 30e9;
    gpu.allocator_reserved_bytes = 35e9;
    gpu.job_processes = 8;
    gpu.other_processes = 0;
    gpu.other_memory_bytes = 0;
    gpu.throttle_any_ratio = 0;
    for (int p = 0; p < 8 && gpu.processes.size < gpu.processes.items.size(); ++p) {
      gpu.processes.items[gpu.processes.size++] =
          GpuProcess{1000 + g * 8 + p, "python", true, 4e9, 0.1};
    }
    gpu.processes.known = true;
    s.gpus.push_back(gpu);
  }
  for (int r = 0; r < gpus; ++r) {
    s.training.ranks.push_back(RankSteps{r, 1000 + r, (t - kStart) * 10, {}});
  }
  agg.Add(s);
  return agg.Take(t, t - kStart);
}

}  // namespace tv

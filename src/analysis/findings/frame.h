// Frame: what the findings rules read from one row, as samples.jsonl holds it.
// Built from a live Row (FrameFromRow) or from a line of samples.jsonl
// (FrameFromJson); both round values exactly as the file does, so a run
// analysed live and replayed afterwards gives the same findings.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/row.h"

namespace tv {

struct GpuFrame {
  int index = 0;
  // How busy the GPU was: Hopper's GPM sm_active_ratio where the GPU has it
  // (duty cycle says 100 % for one tiny kernel), else the duty-cycle util_ratio.
  std::optional<double> busy;
  std::optional<double> memory_used_max_bytes;  // the row's peak
  // The framework allocator's allocated bytes, row peak (markers); what the
  // training really needs where a framework reserves memory up front.
  std::optional<double> allocator_allocated_max_bytes;
  // The allocator's allocated and reserved bytes (row means).
  std::optional<double> allocator_allocated_bytes;
  std::optional<double> allocator_reserved_bytes;
  // The lowest samples of the memory figures whose floors the leak rules read
  // (none in a row from before `_min` was written).
  std::optional<double> allocator_allocated_min_bytes;
  std::optional<double> allocator_reserved_min_bytes;
  std::optional<double> job_memory_min_bytes;
  std::optional<double> memory_used_bytes;  // row mean
  std::optional<double> memory_total_bytes;
  std::optional<double> job_memory_bytes;
  std::optional<double> job_processes;
  std::optional<double> other_memory_bytes;
  std::optional<double> other_processes;
  std::optional<double> throttle_any_ratio;
  // How messages name it where "GPU <index>" would not do: a job judged
  // across nodes (joined.h) names each node's GPUs ("GPU 1 on gpu-b").
  std::string name;
};

struct RankFrame {
  int rank = -1;
  int pid = 0;
  double steps = 0;
  std::optional<double> data_wait_ratio;
  std::optional<double> memory_bytes;           // the process's share of the job's PSS
  std::optional<double> memory_anon_pss_bytes;  // ... of its anonymous part
  std::string name;  // as GpuFrame's: "Rank 3 on gpu-b"; empty: "Rank <rank>"
};

struct Frame {
  double t = 0;
  double elapsed_s = 0;
  std::optional<double> job_cpu_cores;  // CPU the job used, in cores
  std::optional<double> job_cpu_util_ratio;
  std::optional<double> job_memory_util_ratio;
  std::optional<double> job_processes;
  std::optional<double> job_memory_bytes;           // PSS of the job's tree
  std::optional<double> job_memory_min_bytes;       // its lowest sample, as for GPUs
  std::optional<double> job_memory_anon_pss_bytes;  // its anonymous and shared-memory part
  std::optional<double> job_memory_anon_pss_min_bytes;
  std::optional<double> host_memory_available_bytes;
  std::optional<double> host_memory_limit_bytes;  // the tightest cgroup limit, else MemTotal
  std::optional<double> host_cgroup_memory_current_bytes;
  std::optional<double> host_swap_used_bytes;
  std::optional<double> host_cpu_iowait_ratio;
  // PSI of the job's own cgroup: the share of the time it waited for a CPU, for storage.
  std::optional<double> job_cpu_pressure_ratio;
  std::optional<double> job_io_pressure_ratio;
  std::optional<double> steps;
  std::optional<double> data_wait_ratio;
  std::string phase;  // the lowest rank's phase at the row's end; empty: none
  std::vector<GpuFrame> gpus;
  std::vector<RankFrame> ranks;  // when more than one process steps
};

// A GPU counts as the job's while the job is alive and holds memory on it.
inline bool JobHolds(const Frame& f, const GpuFrame& gpu) {
  return f.job_processes.value_or(1) > 0 && gpu.job_memory_bytes.value_or(0) > 0;
}

// The GPU memory the training needs at the row's peak: the framework
// allocator's figure where it sends one (TensorFlow reserves nearly all memory
// up front), else the driver's; `from_allocator` says which. Absent without a
// figure or without the GPU's total to judge it against.
inline std::optional<double> NeededMemoryBytes(const GpuFrame& gpu, bool* from_allocator) {
  *from_allocator = gpu.allocator_allocated_max_bytes.has_value();
  if (!gpu.memory_total_bytes || *gpu.memory_total_bytes <= 0) return std::nullopt;
  return *from_allocator ? gpu.allocator_allocated_max_bytes : gpu.memory_used_max_bytes;
}

// Fills `frame` (reusing its vectors) from a row.
void FrameFromRow(const Row& row, Frame* frame);
// Reads lines of samples.jsonl into frames (with simdjson: a 24-hour run of
// 86,400 rows is read in well under a second). Not thread-safe; reuse one
// reader for the lines of a file.
class FrameReader {
 public:
  enum class Line { kRow, kNotRow, kNotJson };
  FrameReader();
  ~FrameReader();
  // Bytes a caller of ReadPadded keeps readable past the end of a line
  // (simdjson's padding): the line is then parsed where it is, not copied.
  static constexpr size_t kPadding = 64;
  // Fills `frame` (reusing its vectors) from `line`: kRow, kNotRow when it is
  // JSON without a "t", kNotJson when it is not JSON.
  Line Read(std::string_view line, Frame* frame);
  // Read, for a line with kPadding readable bytes after it (JsonlReader's
  // padding): a 22 KB row is not copied first.
  Line ReadPadded(std::string_view line, Frame* frame);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tv

// What the `oom` finding reads besides rows and marks: how the job ended (the
// signal that killed the command, the kernel OOM killer's kills in its cgroup)
// and the last minutes of memory figures it shows as evidence. Live, the
// session hands the analyzer the JobEnd; replayed, the run directory's `end`
// and `oom_kill` events give the same.
//
// Thread safety: none; the analyzer's thread owns them.
#pragma once

#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings/frame.h"

namespace tv {

struct JobEnd {
  std::optional<int> signal;  // the signal that killed the command
  uint64_t oom_kills = 0;     // the kernel OOM killer's kills in the job's cgroup
  std::string cgroup;         // that cgroup's directory, when kills were counted
};

// Whether the exception a training process died of (its type as Python names
// it, possibly qualified, and the first line of its message) is running out of
// memory: PyTorch's OutOfMemoryError, TensorFlow's and Paddle's
// ResourceExhaustedError, Python's MemoryError (Paddle's out-of-memory error
// too), or any message saying "out of memory".
bool IsOutOfMemoryError(std::string_view type, std::string_view message);

// The memory figures of the last kTrail_s of rows, for the `oom` evidence.
class MemoryTrail {
 public:
  static constexpr double kTrail_s = 300;  // the last minutes before the end
  static constexpr size_t kPoints = 30;    // at most this many points in the evidence

  void Add(const Frame& f);
  // Up to kPoints points spread evenly over the trail, the newest included:
  // [{"t", "job_memory_bytes", "memory_limit_bytes", "memory_available_bytes",
  //   "cgroup_memory_current_bytes", "gpus": [{"index", "job_memory_bytes",
  //   "memory_used_bytes", "memory_total_bytes"}]}], each figure only where known.
  nlohmann::ordered_json Points() const;
  // Seconds the trail covers (one row at least once it has one).
  double Covered_s(double row_s) const;

  // The job's closest approach to its memory limit over the rows it still ran
  // in the last `window_s` before its last such row: the highest of job
  // memory and cgroup charge over host.memory_limit_bytes, and the share of
  // the limit the host had not available. Absent without a limit.
  struct AtLimit {
    double ratio = 0;        // the highest share of the limit in use
    double limit_bytes = 0;  // the limit then
    double used_bytes = 0;   // job memory or cgroup charge then
  };
  std::optional<AtLimit> Closest(double window_s) const;
  // The last known limit and the job's peak memory over the trail.
  std::optional<double> LimitBytes() const;
  std::optional<double> JobPeakBytes() const;

 private:
  struct Gpu {
    int index = 0;
    std::optional<double> job_memory_bytes, memory_used_bytes, memory_total_bytes;
  };
  struct Point {
    double t = 0;
    bool alive = true;  // the job still had processes
    std::optional<double> job_memory_bytes, limit_bytes, available_bytes, cgroup_bytes;
    std::vector<Gpu> gpus;
  };
  std::deque<Point> points_;
};

}  // namespace tv

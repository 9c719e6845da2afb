// Host CPU utilisation from /proc/stat: the aggregate "cpu" line and the per-core
// "cpuN" lines. Busy time is total - idle - iowait; ratios come from deltas
// between two reads, so the first read gives none. The number of cpuN lines
// (cores online) becomes host.cpu_limit_cores; a cgroup source may lower it.
// The file is read on row ticks only (and on the first tick, for a baseline):
// the kernel formats every interrupt counter into it, and a row's busy share
// is exactly the difference of the counters at its ends.
//
// Thread safety: ParseProcStatCpu is pure. HostCpuSource is not thread-safe; the
// sampler thread owns it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/source.h"

namespace tv {

// One cpu line in jiffies (USER_HZ). `idle` includes iowait; `total` is
// user + nice + system + idle + iowait + irq + softirq + steal (guest time is
// already inside user and nice). Columns an older kernel lacks count as 0.
struct CpuTimes {
  uint64_t total = 0;
  uint64_t idle = 0;
  uint64_t iowait = 0;  // idle while a task waited for storage (part of `idle`)
};

struct CoreTimes {
  int id = 0;  // N of "cpuN"
  CpuTimes times;
};

struct ProcStatCpu {
  std::optional<CpuTimes> all;   // the "cpu" line
  std::vector<CoreTimes> cores;  // the "cpuN" lines, in file order
};

// Cores with an id at or above this are taken for garbage and skipped.
inline constexpr int kMaxCpuId = 1 << 16;

// Parses the cpu lines of /proc/stat. A line with fewer than 4 numeric columns,
// a non-numeric column or a sum that overflows is skipped. Reuses out->cores.
void ParseProcStatCpu(std::string_view text, ProcStatCpu* out);
ProcStatCpu ParseProcStatCpu(std::string_view text);

// Busy fraction between two reads, 0..1; absent when no time passed or a
// counter went backwards.
std::optional<double> BusyRatio(const CpuTimes& prev, const CpuTimes& cur);
// Share of the CPU time between two readings that was iowait; nullopt when the
// counters went back.
std::optional<double> IowaitRatio(const CpuTimes& prev, const CpuTimes& cur);

// Fills host.cpu_util_ratio, host.cpu_iowait_ratio and host.core_util_ratio
// on row ticks (their share since the row before), host.cpu_limit_cores on
// every tick (as last read). core_util_ratio holds one entry per core present
// now, in file order, and is left empty when any of them has no usable
// previous read (just came online, counter went backwards). When sampling
// stops between rows, Flush reads once more: the last row's share.
class HostCpuSource final : public Source {
 public:
  explicit HostCpuSource(Env* env, std::string path = "/proc/stat");
  std::string_view name() const override { return "host_cpu"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;
  bool Flush(Sample* out) override;

 private:
  Env* env_;
  HeldFile file_;
  std::string buffer_;
  ProcStatCpu cur_;
  std::optional<CpuTimes> prev_all_;
  std::vector<std::optional<CpuTimes>> prev_core_;  // indexed by core id
  double cores_online_ = 0;                         // cpuN lines at the last read
  bool behind_ = false;                             // ticks passed since the last read
  bool noticed_ = false;
};

}  // namespace tv

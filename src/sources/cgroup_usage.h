// The job's totals from its own cgroup (run/job_cgroup.h makes one), read each
// tick at a cost that does not grow with the number of processes: one file
// for the CPU time, one for the memory split, one per pressure kind, and the
// list of the job's PIDs. A cgroup also counts what a child used before it was
// reaped, which per-process files only see through the reaper.
//
// cgroup v2 (the unified hierarchy): cpu.stat usage_usec, memory.stat anon and
// file (where the memory controller is on for the job's cgroup), cpu.pressure,
// memory.pressure and io.pressure (PSI, where the kernel has it). cgroup v1:
// cpuacct.usage and the memory hierarchy's memory.stat (total_rss,
// total_cache). The job's storage I/O stays with the per-process files:
// cgroup v1's blkio charges buffered writes to the root.
//
// Thread safety: the parsers are pure. CgroupUsageSource is not thread-safe;
// the sampler thread owns it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/source.h"
#include "sources/text.h"

namespace tv {

// The directories of the job's own cgroup, one per hierarchy it was placed in;
// empty where it has none.
struct JobCgroupDirs {
  std::string unified;  // cgroup v2
  std::string cpuacct;  // cgroup v1 cpuacct (also "cpu,cpuacct")
  std::string memory;   // cgroup v1 memory
  bool empty() const { return unified.empty() && cpuacct.empty() && memory.empty(); }
};

// The job's cgroup as a run sees it: its directories, or why it has none.
struct JobCgroupView {
  JobCgroupDirs dirs;
  std::string why_not;
};

// For `attach`: the cgroup `pid` is in (the unified hierarchy, v1 cpuacct and
// memory) where the job is alone in it: every process it holds is `pid` or a
// descendant, and this process is not among them. Else why_not names a
// process that is not the job's.
JobCgroupView ExistingJobCgroup(Env* env, int pid);

// cpu.stat's "usage_usec N" (cgroup v2), in microseconds.
std::optional<uint64_t> ParseCpuStatUsage(std::string_view cpu_stat);
// memory.stat's anonymous and file (page cache) bytes: v2 "anon" and "file",
// v1 the hierarchical "total_rss" and "total_cache".
// Also the inactive page cache (v2 "inactive_file", v1 "total_inactive_file"),
// which the kernel reclaims first: charged memory less it is the working set.
struct MemorySplit {
  std::optional<double> anon_bytes;
  std::optional<double> file_bytes;
  std::optional<double> inactive_file_bytes;
};
MemorySplit ParseMemoryStat(std::string_view text, int version);
// A pressure file's "some ... total=N": microseconds in which at least one of
// the cgroup's tasks was stalled on the resource.
std::optional<uint64_t> ParsePressureSome(std::string_view text);
// Calls fn(pid) for each PID of a cgroup.procs text (one a line).
template <typename Fn>
void ForEachProc(std::string_view procs, Fn fn) {
  while (!procs.empty()) {
    if (std::optional<uint64_t> pid = text::ParseU64(text::Trim(text::NextLine(&procs)))) {
      fn(static_cast<int>(*pid));
    }
  }
}
// A digest of cgroup.procs: equal digests, the same processes.
uint64_t ProcsDigest(std::string_view procs);

// Fills job.cpu_cores (from the second tick) and job.cgroup_procs_digest,
// which tells the process tree that the job is counted here
// (sources/process_tree.h reads its files less often then), each tick
// (cgroup.procs itself is read again only on rows and when the host's last
// PID handed out, host.last_pid, moved since the last tick: something forked); on row
// ticks job.memory_anon_bytes, job.memory_file_bytes and
// job.cpu/memory/io_pressure_ratio (over the row, from the second row).
// A file that cannot be read leaves its figures out; what no file gives is
// said once. With `working_set` (a job of `serve`, which has no per-process
// reading), also job.memory_bytes on row ticks: the charged memory
// (memory.current, v1 memory.usage_in_bytes) less the inactive page cache, as
// the kubelet counts a container's working set.
class CgroupUsageSource final : public Source {
 public:
  CgroupUsageSource(Env* env, JobCgroupDirs dirs, bool working_set = false);
  std::string_view name() const override { return "job_cgroup"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;

 private:
  // A counter read each tick and turned into a rate per second of the tick.
  struct Counter {
    HeldFile file;
    double per_second_unit = 1;  // the counter's units in a second
    std::optional<uint64_t> last;
    double last_s = 0;
    // The rate since the last reading; none on the first or after a failure.
    std::optional<double> Rate(Env* env, double now_s, std::string* buffer,
                               std::optional<uint64_t> (*parse)(std::string_view));
  };

  Env* env_;
  JobCgroupDirs dirs_;
  std::optional<Counter> cpu_;
  int cpu_version_ = 0;
  std::optional<HeldFile> memory_stat_;
  std::optional<HeldFile> memory_current_;  // with working_set
  int memory_version_ = 0;
  std::vector<std::pair<Counter, std::optional<double> JobSample::*>> pressure_;
  std::optional<HeldFile> procs_;
  std::optional<uint64_t> digest_;      // of cgroup.procs when last read
  std::optional<uint64_t> last_forks_;  // host.last_pid at the last tick
  std::string buffer_;
  bool said_ = false;
};

}  // namespace tv

// The job's cgroup limits, for cgroup v2 (unified) and v1 (per-controller
// hierarchies, also in hybrid setups): the memory limit, the CPU quota in cores
// and the memory charged now. The effective limit is the tightest over the
// cgroup and its ancestors up to the mount. Hierarchies are found through
// /proc/self/mountinfo; the job's cgroup through /proc/PID/cgroup. When that
// path does not exist under the mount (another cgroup namespace), the mount root
// stands in for it.
//
// Thread safety: the parsers and ResolveCgroupDir are pure. ReadCgroupLimits is
// safe from any thread with a thread-safe Env. CgroupSource is not thread-safe;
// the sampler thread owns it. OomKillWatch is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/source.h"
#include "sources/mountinfo.h"
#include "sources/proc_pid_parse.h"

namespace tv {

// One line of /proc/PID/cgroup: "4:memory:/a/b", "2:cpu,cpuacct:/", "0::/a".
struct ProcCgroupLine {
  uint64_t hierarchy_id = 0;
  std::string controllers;  // comma-separated; empty for the v2 line
  std::string path;
};
std::vector<ProcCgroupLine> ParseProcCgroup(std::string_view text);

// A limit file's content. `ok` false: unreadable text. `ok` and no `limit`: no
// limit ("max", or a v1 value of 2^60 or more such as 9223372036854771712).
struct ParsedLimit {
  bool ok = false;
  std::optional<double> limit;
};
inline constexpr uint64_t kCgroupUnlimitedFloor = uint64_t{1} << 60;

ParsedLimit ParseMemoryLimit(std::string_view text);  // memory.max, memory.limit_in_bytes
ParsedLimit ParseCpuMax(std::string_view text);       // v2 cpu.max "quota period", in cores
// v1 cpu.cfs_quota_us (-1: none) over cpu.cfs_period_us, in cores.
ParsedLimit ParseCfsQuota(std::string_view quota, std::string_view period);

// Where a controller's files for a cgroup lie.
struct CgroupDir {
  int version = 0;          // 1 or 2
  std::string mount_point;  // the highest directory visible: the walk stops here
  std::string dir;          // the cgroup's own directory
};

// Picks the v1 hierarchy that carries `controller` ("memory", "cpu"), else the
// v2 hierarchy; absent when neither is mounted and listed for the process. A
// path outside the mount's root (or holding "..") maps to the mount point.
std::optional<CgroupDir> ResolveCgroupDir(const std::vector<MountInfo>& mounts,
                                          const std::vector<ProcCgroupLine>& cgroups,
                                          std::string_view controller);

// The same in hierarchies of one version only (1 or 2); for 2, `controller`
// is not looked at.
std::optional<CgroupDir> ResolveCgroupDirIn(int version, const std::vector<MountInfo>& mounts,
                                            const std::vector<ProcCgroupLine>& cgroups,
                                            std::string_view controller);

// `dir` and each parent up to and including `mount_point`, leaf first.
std::vector<std::string> CgroupChain(const CgroupDir& dir);

// The files a CgroupSource reads, resolved once.
struct CgroupFiles {
  std::optional<CgroupDir> memory;
  std::optional<CgroupDir> cpu;
  std::vector<std::string> memory_limit;  // per level, leaf first
  std::string memory_current;             // memory.current or memory.usage_in_bytes
  std::vector<std::string> cpu_quota;     // cpu.max or cpu.cfs_quota_us, per level
  std::vector<std::string> cpu_period;    // v1 cpu.cfs_period_us, per level
};
// `pid` <= 0 means the calling process.
CgroupFiles LocateCgroupFiles(Env* env, int pid);

// What `trainvitals check` shows; limits absent when unlimited or unknown.
struct CgroupLimits {
  std::optional<CgroupDir> memory;
  std::optional<CgroupDir> cpu;
  std::optional<double> memory_limit_bytes;
  std::optional<double> cpu_limit_cores;
  std::optional<double> memory_current_bytes;
};
CgroupLimits ReadCgroupLimits(Env* env, int pid);

// The kernel OOM killer's kill count in a memory cgroup: the "oom_kill N" line
// of v2 memory.events or of v1 memory.oom_control (kernels from 4.13); absent
// when the text has none.
std::optional<uint64_t> ParseOomKills(std::string_view text);
// The file holding that count for a memory cgroup directory.
std::string OomKillsFile(const CgroupDir& memory);

// Counts the kernel OOM killer's kills in the job's memory cgroups over a run.
// Each cgroup the job is seen in is followed from the count it had then; Read
// compares with the count now. A job that moves itself into another cgroup (a
// child, or a fresh one with its own limit) is followed there too (CgroupSource
// follows it on row ticks).
//
// Thread safety: safe from any thread (CgroupSource follows on the sampler
// thread; the session reads after the job ended) with a thread-safe Env.
class OomKillWatch {
 public:
  explicit OomKillWatch(Env* env) : env_(env) {}
  // Starts counting in `memory`'s cgroup from its count now; a cgroup already
  // followed, or whose count cannot be read, is left alone.
  void Follow(const CgroupDir& memory);
  struct Kills {
    uint64_t count = 0;  // the most kills counted in one followed cgroup
    std::string cgroup;  // that cgroup's directory (with none: the last followed)
  };
  // The kills since each cgroup was followed; absent when no followed cgroup's
  // count can be read now (none followed, or their directories removed).
  std::optional<Kills> Read();

 private:
  struct Followed {
    std::string dir;
    std::string file;
    uint64_t since = 0;
  };
  Env* env_;
  std::mutex mu_;
  std::vector<Followed> followed_;
  std::string buffer_;
};

// Lowers host.memory_limit_bytes and host.cpu_limit_cores to the cgroup's
// limits when it has them (read on the first tick, after a move, and again on
// a row tick once kLimitsEvery_s passed: a limit is seldom changed, and each
// is a file at every level up the hierarchy; in between it reuses them), and
// fills host.cgroup_memory_current_bytes on
// every tick. On row ticks it also looks whether the process moved to another
// cgroup (a job that puts itself under its own limit) and then follows it
// there. Says once when no cgroup controller is found.
class CgroupSource final : public Source {
 public:
  CgroupSource(Env* env, int pid)
      : env_(env),
        pid_(pid),
        oom_kills_(std::make_shared<OomKillWatch>(env)),
        membership_(ProcPidFile(pid, "cgroup")) {}
  std::string_view name() const override { return "cgroup"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;
  // The OOM kills in the cgroups the process was seen in; shared so that it
  // can be read after the sampler stopped.
  std::shared_ptr<OomKillWatch> oom_kills() const { return oom_kills_; }

 private:
  // Whether /proc/PID/cgroup now differs from what the files were located by.
  bool Moved();
  void Locate(std::vector<Notice>* notices);

  Env* env_;
  int pid_;
  std::shared_ptr<OomKillWatch> oom_kills_;
  bool located_ = false;
  static constexpr double kLimitsEvery_s = 10;
  double limits_read_s_ = 0;  // mono_s of the last read of the limits
  std::string located_by_;    // /proc/PID/cgroup's text when located
  HeldFile membership_;       // /proc/PID/cgroup, kept open
  CgroupFiles files_;
  std::optional<HeldFile> current_file_;  // memory.current, read every tick
  std::string buffer_;
  std::string period_buffer_;
  std::optional<double> memory_limit_bytes_;
  std::optional<double> cpu_limit_cores_;
};

}  // namespace tv

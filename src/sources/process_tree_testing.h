// Test helpers for the process source: a fake /proc tree in a MemEnv, and a
// ticker that reads the source at given times. Test-only; single-threaded.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/env.h"
#include "sources/process_tree.h"

namespace tv::testing {

inline constexpr double kMiB = 1024.0 * 1024.0;

// A fake /proc in a MemEnv: processes with their stat, cmdline, io, smaps_rollup
// and per-thread children files. Clock ticks are 100/s and pages 4 KiB.
class FakeProc {
 public:
  struct P {
    int ppid = 0;
    std::string comm;
    uint64_t start = 0;
    uint64_t cpu_ticks = 0;
    uint64_t children_ticks = 0;  // cutime: what it reaped
    char state = 'S';
    uint64_t rss_bytes = 4096;
    std::optional<uint64_t> pss_bytes;       // absent: equal to RSS
    std::optional<uint64_t> pss_anon_bytes;  // Pss_Anon; absent: no such line (before 5.10)
    // stat's startcode: Add gives a child its parent's (a fork); a test that
    // has it run a program of its own (exec) gives it another.
    uint64_t code = 0;
    uint64_t read_bytes = 0;
    uint64_t write_bytes = 0;
    std::map<int, std::vector<int>> thread_children;  // tid -> children
  };

  P& Add(int pid, int ppid, std::string comm, uint64_t start = 0) {
    P& p = procs_[pid];
    p = P{};
    p.ppid = ppid;
    p.comm = std::move(comm);
    p.start = start ? start : 1000 + pid;
    p.thread_children[pid];
    p.code = 0x400000 + static_cast<uint64_t>(pid) * 0x1000;
    if (procs_.count(ppid)) {
      procs_[ppid].thread_children[ppid].push_back(pid);
      p.code = procs_[ppid].code;
    }
    return p;
  }
  P& operator[](int pid) { return procs_.at(pid); }

  // The process exited and its parent waited for it: the parent's reaped time
  // grows by all of the process's own and reaped time.
  void Reap(int pid) {
    P& p = procs_.at(pid);
    if (procs_.count(p.ppid)) procs_[p.ppid].children_ticks += p.cpu_ticks + p.children_ticks;
    Kill(pid);
  }

  // Removes the process and its files; its parent no longer lists it.
  void Kill(int pid) {
    Unpublish(pid);
    procs_.erase(pid);
    for (auto& [other, p] : procs_) {
      for (auto& [tid, kids] : p.thread_children) std::erase(kids, pid);
    }
  }

  void Publish() {
    for (auto& [pid, p] : procs_) {
      Unpublish(pid);
      std::string base = fmt::format("/proc/{}/", pid);
      env.Set(
          base + "stat",
          fmt::format("{} ({}) {} {} 1 1 0 -1 0 0 0 0 0 {} 0 {} 0 20 0 {} 0 {} 1000 {} 1 {} 3\n",
                      pid, p.comm, p.state, p.ppid, p.cpu_ticks, p.children_ticks,
                      p.thread_children.size(), p.start, p.rss_bytes / 4096, p.code));
      env.Set(base + "cmdline", p.comm + std::string("\0--flag\0", 8));
      env.Set(base + "io", fmt::format("rchar: 1\nread_bytes: {}\nwrite_bytes: {}\n", p.read_bytes,
                                       p.write_bytes));
      std::string anon =
          p.pss_anon_bytes ? fmt::format("Pss_Anon: {} kB\n", *p.pss_anon_bytes / 1024) : "";
      env.Set(base + "smaps_rollup", fmt::format("Rss: {} kB\nPss: {} kB\n{}", p.rss_bytes / 1024,
                                                 p.pss_bytes.value_or(p.rss_bytes) / 1024, anon));
      for (auto& [tid, kids] : p.thread_children) {
        std::string list;
        for (int k : kids) list += fmt::format("{} ", k);
        env.Set(base + fmt::format("task/{}/children", tid), list);
      }
    }
  }

  MemEnv env;

 private:
  void Unpublish(int pid) {
    std::string base = fmt::format("/proc/{}/", pid);
    for (const char* leaf : {"stat", "cmdline", "io", "smaps_rollup"}) env.Remove(base + leaf);
    for (auto& [tid, kids] : procs_[pid].thread_children) {
      env.Remove(base + fmt::format("task/{}/children", tid));
    }
  }

  std::map<int, P> procs_;
};

inline ProcessTreeOptions TestOptions() {
  ProcessTreeOptions o;
  o.clock_ticks_per_second = 100;
  o.page_size_bytes = 4096;
  o.cpu_seconds = [] { return 0.0; };
  o.reaper_pid = 1;  // init reaps: nothing outside the tree is counted
  return o;
}

struct Ticker {
  ProcessTreeSource* source;
  Sample sample;
  std::vector<Notice> notices;
  std::optional<uint64_t> forks;  // host.last_pid to show; absent: unknown
  // What the job's cgroup said earlier in the tick (sources/cgroup_usage.h).
  std::optional<uint64_t> procs_digest;
  std::optional<double> cgroup_cpu_cores;
  std::optional<double> cgroup_memory_bytes;  // host.cgroup_memory_current_bytes
  const JobSample& At(double t, bool row_tick = false) {
    sample = Sample{};
    sample.host.last_pid = forks;
    sample.job.cgroup_procs_digest = procs_digest;
    sample.job.cpu_cores = cgroup_cpu_cores;
    sample.host.cgroup_memory_current_bytes = cgroup_memory_bytes;
    notices.clear();
    source->Read(Tick{t, row_tick}, &sample, &notices);
    return sample.job;
  }
};

inline std::vector<int> Pids(const std::vector<ProcessInfo>& infos) {
  std::vector<int> pids;
  pids.reserve(infos.size());
  for (const auto& i : infos) pids.push_back(i.pid);
  std::sort(pids.begin(), pids.end());
  return pids;
}

}  // namespace tv::testing

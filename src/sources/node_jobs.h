// NodeJobsSource: every job on the node, each tick (what `serve` reads). Each
// process is placed when first seen and again on the next tick (a scheduler
// moves what it starts just after the fork), by the cgroup path of
// /proc/PID/cgroup (sources/jobs.h); a process in no job's cgroup that uses a
// GPU makes a job of its session ("tree-<sid>"). A job's identity comes from
// its path, its environment (/proc/PID/environ, where readable: Slurm's and
// the launchers' variables, the GPUs it was given) and its owner's name; its
// figures from its own cgroup (sources/cgroup_usage.h, one set of files a job,
// not one a process); its GPUs from the GPU source's process lists of the same
// tick (the GPU source runs first).
//
// Which jobs are served: every Slurm job; any other job while it uses or was
// given a GPU (and after, while it lives). The agent's own job never.
//
// Thread safety: not thread-safe; the sampler thread owns it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/env.h"
#include "core/source.h"
#include "sources/cgroup.h"
#include "sources/cgroup_ns.h"
#include "sources/cgroup_usage.h"
#include "sources/mountinfo.h"

namespace tv {

class NodeJobsSource final : public Source {
 public:
  // `self_pid`: the agent's own process, whose job is never served.
  NodeJobsSource(Env* env, int self_pid);
  ~NodeJobsSource() override;
  std::string_view name() const override { return "node_jobs"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;

 private:
  struct Proc {
    std::string key;       // the job's key ("<kind>/<id>"); empty: in no job's cgroup
    int session = -1;      // for a process in no job: its session, once read (0: unreadable)
    bool settled = false;  // placed twice, on the tick it was first seen and the next
  };
  struct Job;

  // The key of the job a process is in: its cgroup's, else its session's
  // ("tree/<sid>", once read); empty: none.
  static std::string KeyOf(const Proc& proc);
  void ReadSession(int pid, Proc* proc);
  // The name of the user `pid` runs as (else the number); empty when unreadable.
  std::string OwnerOf(int pid);
  // Places a process seen for the first time; false when it is already gone.
  bool Place(int pid, Proc* proc);
  // Completes `job`'s cgroup directories from a process's /proc/PID/cgroup lines.
  void FillDirs(const std::vector<ProcCgroupLine>& lines, const std::string& key, Job* job);
  Job& Open(const std::string& key, int pid, double t);
  void ReadEnviron(Job& job);
  void ReadLimits(Job& job, double now_s);
  // Each job's part of each GPU; marks jobs that use one as served.
  void ShareGpus(const Sample& sample);

  Env* env_;
  int self_pid_;
  std::string self_key_;
  std::vector<MountInfo> mounts_;
  std::unique_ptr<CgroupNamespace> namespace_;  // made with the mounts
  std::unordered_map<int, Proc> procs_;
  std::map<std::string, std::unique_ptr<Job>> jobs_;
  std::vector<std::string> names_;
  std::vector<int> pids_;
  std::string buffer_;
  bool said_environ_ = false;
};

}  // namespace tv

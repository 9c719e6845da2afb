// Sample: what the machine and the job showed at one instant. Produced by the
// sources on the sampler thread, consumed by the Aggregator. Values are in SI
// base units; a value that could not be read is absent, never 0.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/gpu_sample.h"
#include "core/job_identity.h"
#include "core/training_sample.h"

namespace tv {

struct HostSample {
  std::optional<double> cpu_util_ratio;    // all cores of the host, 0..1
  std::optional<double> cpu_iowait_ratio;  // idle waiting for storage, all cores, 0..1
  std::vector<double> core_util_ratio;     // per core, 0..1; empty when unknown
  std::optional<double> cpu_limit_cores;   // cores the job may use (cgroup cpu.max, affinity)
  std::optional<double> memory_total_bytes;
  std::optional<double> memory_used_bytes;  // MemTotal - MemAvailable
  std::optional<double> memory_available_bytes;
  std::optional<double> memory_limit_bytes;  // min(cgroup memory.max, MemTotal)
  std::optional<double> swap_total_bytes;
  std::optional<double> swap_used_bytes;
  std::optional<double> load1;
  std::optional<double> load5;
  std::optional<double> load15;
  std::optional<double> disk_read_bytes_per_second;
  std::optional<double> disk_write_bytes_per_second;
  std::optional<double> net_rx_bytes_per_second;
  std::optional<double> net_tx_bytes_per_second;
  std::optional<double> cgroup_memory_current_bytes;
  std::optional<double> cpu_power_watts;    // RAPL package power over the last interval
  std::optional<double> cpu_energy_joules;  // RAPL energy since monitoring began
  // The file system holding the run directory (statvfs): space left to an
  // unprivileged writer, and its size.
  std::optional<double> run_dir_free_bytes;
  std::optional<double> run_dir_size_bytes;
  // The PID the host handed out last (/proc/loadavg's last field): every fork
  // moves it. When it has not moved since the last tick nothing forked, so the
  // process source need not look for new children.
  std::optional<uint64_t> last_pid;
};

// One process of the job's tree.
struct ProcessInfo {
  int pid = 0;
  int ppid = 0;
  std::string name;     // comm
  std::string cmdline;  // arguments joined by spaces, read once
};

// One member of the job's tree at this tick: its own figures.
struct ProcessUsage {
  int pid = 0;
  int ppid = 0;
  double cpu_seconds = 0;  // its own CPU time (utime + stime) since it started
  double rss_bytes = 0;
  double memory_bytes = 0;  // its share of job.memory_bytes (PSS based)
  bool zombie = false;      // exited, not yet reaped
  // Its share of job.memory_anon_pss_bytes; absent where its PSS reading
  // lacks Pss_Anon.
  std::optional<double> anon_pss_bytes;
};

struct JobSample {
  std::optional<double> processes;
  std::optional<double> threads;
  std::optional<double> cpu_cores;       // cores busy, of the job's cgroup or summed over the tree
  std::optional<double> cpu_util_ratio;  // cpu_cores / host.cpu_limit_cores
  std::optional<double> rss_bytes;       // RSS summed over the tree, as ps adds it up
  std::optional<double> memory_bytes;    // shared pages counted once (PSS based)
  // Its anonymous and shared memory part (Pss_Anon + Pss_Shmem based): what
  // other processes leaving cannot move.
  std::optional<double> memory_anon_pss_bytes;
  std::optional<double> memory_util_ratio;  // memory_bytes / host.memory_limit_bytes
  std::optional<double> read_bytes_per_second;
  std::optional<double> write_bytes_per_second;
  // From the job's own cgroup (sources/cgroup_usage.h), when it has one.
  std::optional<double> memory_anon_bytes;
  std::optional<double> memory_file_bytes;
  std::optional<double> cpu_pressure_ratio;  // PSI "some": share of the time stalled
  std::optional<double> memory_pressure_ratio;
  std::optional<double> io_pressure_ratio;
  std::optional<uint64_t> cgroup_procs_digest;  // ProcsDigest of its cgroup.procs
  // Seconds since the per-process files were read (processes, threads,
  // rss_bytes, memory_bytes and members are of that reading); 0 this tick.
  std::optional<double> process_files_age_s;
  // PIDs of the tree at this tick, ascending (host PID namespace as /proc shows
  // it). Filled by the process source, read by sources later in the same tick
  // (the GPU source attributes device memory with it).
  std::vector<int> pids;
  std::vector<ProcessUsage> members;  // in discovery order
  // Processes that joined or left the tree since the previous sample.
  std::vector<ProcessInfo> started;
  std::vector<ProcessInfo> exited;
  std::vector<ProcessInfo> execed;  // members that ran a new program since the last sample
};

// A job's part of one GPU (of Sample::gpus): its compute processes there (of
// the GPU's top kGpuTopProcesses), or the GPU was given to it.
struct JobGpuShare {
  size_t gpu = 0;          // index into Sample::gpus
  bool allocated = false;  // the job's environment names this GPU
  int processes = 0;
  std::optional<double> memory_bytes;   // absent when the driver does not say
  std::optional<double> sm_util_ratio;  // absent before the driver's first per-process read
};

// One job on the node as `serve` sees it at one instant (sources/node_jobs.h).
// A monitored training session (`run`, `attach`, a callback or monitor())
// whose processes are a job's (`serve`; run/node_sessions.h), as its latest
// announcement says: its own judgement (made with its step and data-wait
// markers) and its training figures over its latest row.
struct JobSession {
  int pid = 0;       // the monitoring process, as the job's PID namespace numbers it
  std::string name;  // the run's name
  std::string mode;  // "run", "attach", "python"
  std::optional<double> health_score;
  std::vector<std::pair<std::string, std::string>> findings;  // open: id, severity
  std::optional<double> epoch;
  std::optional<double> step;
  std::optional<double> steps_per_second;
  std::optional<double> data_wait_ratio;
};

struct NodeJob {
  std::shared_ptr<const JobIdentity> identity;
  double started_t = 0;  // unix seconds when first seen
  // processes, cpu_cores, memory_bytes (the working set: charged memory less
  // the inactive page cache), memory_anon_bytes, memory_file_bytes, pressures.
  JobSample job;
  std::optional<double> memory_limit_bytes;  // its cgroup's own limit
  std::optional<double> cpu_limit_cores;
  std::vector<int> pids;             // ascending, host PID namespace
  std::vector<JobGpuShare> gpus;     // the GPUs it uses or was given
  std::vector<JobSession> sessions;  // by the monitoring process's PID
};

struct Sample {
  double mono_s = 0;  // monotonic clock
  double t = 0;       // unix seconds
  HostSample host;
  JobSample job;
  std::vector<GpuSample> gpus;
  TrainingSample training;
  // Every job on the node (`serve` only; empty in a run).
  std::vector<NodeJob> node_jobs;
};

}  // namespace tv

// What `trainvitals top` shows at one refresh: the host, every GPU with its
// compute processes, the trainvitals sessions running on this machine, and the
// processes of their jobs and of the GPUs. Plain data, made by the top feed
// (run/top_feed.h) and drawn by the top views; SI base units as everywhere.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/sample.h"

namespace tv {

// A trainvitals session (run, attach, or a training script's own monitor), as
// its announcement (sinks/live_file.h) said at its latest row.
struct TopSession {
  int pid = 0;      // the monitoring process
  int job_pid = 0;  // the root of the job's process tree
  std::string mode;
  std::string name;
  std::string command;  // its words joined by spaces
  std::string run_dir;
  double start_t = 0;
  double updated_t = 0;  // unix time of its latest row
  std::optional<double> epoch;
  std::optional<double> step;
  std::optional<double> steps_per_second;
  std::optional<double> data_wait_ratio;
  std::optional<double> cpu_cores;     // the job's tree
  std::optional<double> memory_bytes;  // the job's tree (PSS based)
  std::optional<double> health_score;  // 0..100, the run's so far
  std::vector<std::string> findings;   // open ones: "input-bound (warning)"
  std::vector<std::string> alerts;     // firing ones: "gpu-idle (warning) GPU 1"
  bool worst_critical = false;         // a critical finding or alert is open
};

// A process worth a line: a member of a session's job, or on a GPU.
struct TopProcess {
  int pid = 0;
  int ppid = 0;
  std::string user;
  std::string name;                 // comm
  std::string command;              // cmdline (arguments joined by spaces), else [comm]
  std::optional<double> cpu_cores;  // since the previous refresh; absent at the first
  double rss_bytes = 0;
  std::vector<int> gpus;                    // GPU indices it holds memory on
  std::optional<double> gpu_memory_bytes;   // summed over them
  std::optional<double> gpu_sm_util_ratio;  // the highest of them
  int session = -1;      // index into TopModel::sessions of the job it belongs to; -1: none
  bool running = false;  // state R
};

struct TopGpu {
  GpuSample sample;  // index is NVML's
  // Every compute process, with the driver's figures (the sample keeps the top few).
  std::vector<GpuProcess> processes;
  std::string name;                             // "NVIDIA H100 80GB HBM3"
  std::optional<double> sessions_memory_bytes;  // held by the sessions' jobs
};

struct TopModel {
  double t = 0;  // unix seconds
  std::string host;
  HostSample host_sample;
  int cpus = 0;
  std::string gpu_error;  // why no GPU is shown (no driver, ...); empty when GPUs are read
  std::vector<TopGpu> gpus;
  std::vector<TopSession> sessions;
  std::string sessions_error;         // why sessions cannot be listed
  std::vector<TopProcess> processes;  // parents before children where both are listed
};

}  // namespace tv

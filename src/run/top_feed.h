// TopFeed: reads what `trainvitals top` shows, once per refresh: the host
// sources, every GPU through the driver (all of them, as NVML numbers them,
// MIG slices included), the sessions announced in the user's sessions
// directory (run/live_dir.h), and /proc for the processes of the sessions'
// jobs and of the GPUs. It only reads: a session's files are never written
// (one whose process is gone is removed, its announcement being stale).
//
// Thread safety: one thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/env.h"
#include "core/source.h"
#include "views/top/top_model.h"

namespace tv {

class GpuSource;

class TopFeed {
 public:
  // `gpus`: false reads no GPU (host only). `sessions_dir`: empty for
  // LiveSessionsDir().
  TopFeed(bool gpus, std::string sessions_dir = "");
  ~TopFeed();
  TopModel Next();

 private:
  struct Seen {
    uint64_t starttime = 0;
    uint64_t ticks = 0;
  };
  struct Described {
    uint64_t starttime = 0;
    std::string command;
    std::string user;
  };
  void ReadSessions(TopModel* model);
  void ReadProcesses(double mono_s, TopModel* model);
  const Described& Describe(int pid, uint64_t starttime, const std::string& comm);

  Env* env_;
  std::string sessions_dir_;
  std::vector<std::unique_ptr<Source>> host_;
  std::unique_ptr<GpuSource> gpu_;
  std::map<std::pair<int, int>, std::string> gpu_names_;  // (NVML index, MIG instance) -> model
  std::string gpu_error_;
  std::unordered_map<int, Seen> seen_;  // CPU ticks at the previous refresh, per PID
  std::unordered_map<int, Described> described_;
  std::unordered_map<uint32_t, std::string> users_;
  double previous_mono_s_ = -1;
};

}  // namespace tv

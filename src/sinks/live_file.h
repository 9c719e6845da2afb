// LiveFile: the running session's announcement for `trainvitals top`, the file
// <sessions dir>/<pid>.json (run/live_dir.h). Rewritten whole at every row
// (written beside, then renamed over, so a reader never sees half of it) with
// who the session is and its latest row, health score, open findings and
// firing alerts; removed when the run ends. Format: docs/cli.md#top.
//
// Thread safety: a Sink, used on the sink thread only.
#pragma once

#include <string>
#include <vector>

#include "core/sink.h"

namespace tv {

struct LiveIdentity {
  int pid = 0;       // the monitoring process (trainvitals, or the training process itself)
  int job_pid = 0;   // the root of the job's process tree
  std::string mode;  // "run", "attach", "python"
  std::string name;  // the run's name
  std::vector<std::string> command;
  std::string run_dir;
  double start_t = 0;  // unix seconds
  double interval_s = 1;
};

class LiveFile final : public Sink {
 public:
  // `dir`: the sessions directory, which exists.
  LiveFile(const std::string& dir, LiveIdentity identity);
  void OnRow(const Row& row) override;
  void OnClose() override;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string temp_path_;
  std::string head_;   // the identity's JSON members, made once
  bool said_ = false;  // a failed write was said
};

}  // namespace tv

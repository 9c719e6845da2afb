// Session: one monitored run from start to summary, shared by `run`, `attach`
// and the in-process Python mode. It owns the run directory, the marker
// endpoint, the sampler with its sources (run/sources.h) and observers
// (run/pipeline.h, in their declared order), the sinks (run/exporters.h) and
// the alert actions (run/alert_delivery.h), and writes meta.json
// (run/run_meta.h), samples.jsonl, events.jsonl and summary.json
// (run/run_end.h: the observers' parts, collected in their declared order).
//
// Thread safety: all methods from one controlling thread; AddEvent from any.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "run/pipeline.h"
#include "run/run_meta.h"
#include "store/run_summary.h"

namespace tv {

class AlertActions;
class Exporters;
class GpuOpening;
class HistoryAside;
struct JobCgroupView;
class MarkerEndpoint;
class OomKillWatch;
class Sampler;
class SinkThread;
class TerminalRow;

class Session {
 public:
  // Validates `config` and prepares the run directory. Throws ConfigError with a
  // clear message; call before the child starts so nothing is lost later.
  Session(Config config, std::vector<std::string> command, std::string mode);
  ~Session();

  const std::string& run_dir() const { return run_dir_; }

  // The marker socket training processes report to (TRAINVITALS_SOCKET); empty
  // when it could not be made (the run goes on without markers).
  std::string marker_socket() const;

  // Where the live status goes (a terminal's reserved row, not owned, which
  // must outlive this session); none unless set before Start.
  void ShowLiveStatus(TerminalRow* row) { live_row_ = row; }

  // Opens the run history aside for the run's end (run, attach: an SQLite
  // history, run/run_history.h HistoryAside), once the command exists; else
  // Start does.
  void OpenHistory();

  // Starts sampling the process tree rooted at `root_pid`. Throws nothing: the
  // command is already running, so a failure here is said once and the run
  // goes on unmonitored (Finish still writes what it can).
  // `cgroup`: the job's own (run/job_cgroup.h, sources/cgroup_usage.h), or why
  // it has none. `gpus`: the driver opening aside since before the child
  // started (run/sources.h MakeSources).
  void Start(int root_pid, const JobCgroupView* cgroup = nullptr, GpuOpening* gpus = nullptr);

  void AddEvent(EventType type, nlohmann::ordered_json fields = nlohmann::ordered_json::object());

  // Stops sampling, writes summary.json, prints the summary unless quiet and
  // indexes the run in the history (for `run` and `attach` on a thread of
  // their own, which the destructor waits for: run/run_history.h HistoryAside).
  // Bounded in time: a sampler stuck in a driver call is left behind (and
  // kept alive); a full disk is waited for a while before summary.json is given up.
  RunSummary Finish(std::optional<int> exit_code, std::optional<int> exit_signal);

  // Removes the prepared run directory when the command never started (and
  // closes the history, unwritten).
  void Abandon();

 private:
  // The run as meta.json, the live file and the sinks' labels name it.
  LiveIdentity Identity(int root_pid) const;
  void StartMonitoring(int root_pid, const JobCgroupView* cgroup, GpuOpening* gpus);
  // Tells the analysis how the job ended (its signal, the kernel OOM killer's
  // kills in its cgroup, written as an `oom_kill` event), before it stops.
  void NoteJobEnd(std::optional<int> exit_signal);

  Config config_;
  std::vector<std::string> command_;
  std::string mode_;
  std::string run_dir_;
  double start_wall_ = 0;
  RunJudging judging_;
  std::unique_ptr<Exporters> exporters_;     // made before the child starts
  std::unique_ptr<MarkerEndpoint> markers_;  // likewise
  std::string markers_error_;
  RunObservers observers_;
  MetaRecord meta_;  // what meta.json says (the GPU models, for the cost)
  std::unique_ptr<AlertActions> alert_actions_;  // when a rule has actions beyond the log
  std::shared_ptr<OomKillWatch> oom_kills_;      // the cgroup source's, outlives it
  TerminalRow* live_row_ = nullptr;
  std::unique_ptr<SinkThread> sinks_;
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<HistoryAside> history_;  // its end waits for the run indexed
  Sampler* left_behind_ = nullptr;         // its thread is stuck in a source: never freed
  bool finished_ = false;
  static constexpr double kSummaryWait_s = 20;
  // How long the end of a run waits for alert actions still delivering.
  static constexpr double kAlertGrace_s = 5;
};

}  // namespace tv

#include "run/session.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "actions/actions.h"
#include "core/notice_event.h"
#include "core/sampler.h"
#include "core/sink_thread.h"
#include "core/thread.h"
#include "markers/endpoint.h"
#include "run/alert_delivery.h"
#include "run/exporters.h"
#include "run/run_dir.h"
#include "run/run_end.h"
#include "run/run_history.h"
#include "run/sources.h"
#include "run/still_running.h"
#include "sinks/jsonl_sink.h"
#include "sources/cgroup.h"
#include "sources/markers.h"
#include "store/job_end_event.h"
#include "views/summary.h"
#include "views/terminal_row.h"

namespace tv {

namespace fs = std::filesystem;

Session::Session(Config config, std::vector<std::string> command, std::string mode)
    : config_(std::move(config)), command_(std::move(command)), mode_(std::move(mode)) {
  Validate(config_);
  if (config_.gpus_auto > 0 && mode_ != "run") {
    throw ConfigError(fmt::format(
        "--gpus auto:{}: only `trainvitals run` gives a job its GPUs; {} watches the ones it has",
        config_.gpus_auto, mode_ == "attach" ? "attach" : "the monitor in a training script"));
  }
  judging_ = LoadJudging(config_);
  // Before the child starts, so a port in use fails the run early.
  exporters_ = std::make_unique<Exporters>(config_);
  start_wall_ = Clock::Default()->WallSeconds();
  run_dir_ = PrepareRunDir(config_, command_, start_wall_);
  markers_ = MarkerEndpoint::Create(config_.interval_s, &markers_error_);
  if (std::string error = exporters_->OpenBoards(start_wall_); !error.empty()) {
    Abandon();
    throw ConfigError(error);
  }
}

Session::~Session() {
  if (!finished_ && (sampler_ || sinks_)) Finish(std::nullopt, std::nullopt);
}

std::string Session::marker_socket() const {
  return markers_ ? markers_->socket_path() : std::string();
}

LiveIdentity Session::Identity(int root_pid) const {
  std::string name = config_.name.empty() ? DefaultRunName(command_) : config_.name;
  return LiveIdentity{::getpid(),      root_pid,           mode_,
                      std::move(name), command_,           run_dir_,
                      start_wall_,     config_.interval_s, markers_ ? markers_->socket_path() : ""};
}

void Session::Start(int root_pid, const JobCgroupView* cgroup, GpuOpening* gpus) {
  bool ok = RunGuarded("starting the monitor", "the command runs unmonitored",
                       [&] { StartMonitoring(root_pid, cgroup, gpus); });
  if (!ok && sinks_) {
    AddEvent(EventType::kError,
             {{"message", "monitoring could not start; the command ran unmonitored"}});
  }
}

void Session::OpenHistory() {
  // Not in a training process (the Python mode), whose children are forked:
  // a thread there would hold the database's locks at their fork.
  if (history_ || (mode_ != "run" && mode_ != "attach")) return;
  std::string history = RunIndexPath(config_.db);
  if (!HistoryAside::Applies(history)) return;
  history_ = std::make_unique<HistoryAside>(history);
  history_->Start();
}

void Session::StartMonitoring(int root_pid, const JobCgroupView* cgroup, GpuOpening* gpus) {
  OpenHistory();  // the history the run's end indexes into, while the command runs
  RunSources sources =
      MakeSources(config_, root_pid, run_dir_, markers_.get(), markers_error_, cgroup, gpus);
  LiveIdentity run = Identity(root_pid);
  meta_ =
      RunMeta(run, config_, judging_, sources.gpu_driver, sources.gpus, exporters_->metrics_url());
  WriteJsonFile(run_dir_ + "/meta.json", MetaJson(meta_));
  if (config_.out.empty()) PointLatestLink(config_.runs_dir, run_dir_);
  sinks_ = std::make_unique<SinkThread>(exporters_->MakeSinks(
      ExporterContext{run, &meta_, live_row_, judging_.thresholds[Th::kRepeatLine_s]}));
  sinks_->Start();
  AddEvent(EventType::kStart, {{"pid", root_pid}, {"mode", mode_}});
  MarkerSource* marker_source = sources.markers;
  oom_kills_ = sources.oom_kills;
  for (const Notice& n : sources.notices) {
    AddEvent(EventType::kSourceUnavailable, NoticeFields(n));
  }
  observers_.processes.set_root_pid(root_pid);
  // Each observer on its own: one that fails is turned off, the others go on.
  observers_.findings = std::make_unique<FindingsObserver>(judging_.thresholds, config_.interval_s);
  observers_.alerts = std::make_unique<AlertsObserver>(judging_.alert_rules, config_.interval_s);
  if (marker_source != nullptr) {
    // The back-channel (docs/markers.md): each memory risk the analysis opens
    // goes to every training process, a rule with `stop = true` asks them to
    // stop, and a stall asks them for their stacks. All run on the sampler thread; the sampler owns
    // the source and outlives every call of the handlers.
    observers_.findings->set_risk_handler(
        [marker_source](const MemoryRisk& risk) { marker_source->PublishRisk(risk); });
    observers_.alerts->set_stop_handler(
        [marker_source](const AlertRule& rule) { marker_source->RequestStop(rule.name); });
    // A stalled job: where each process waits, from its Python stacks. A job
    // held back, or one whose wait for input nothing measures: a profile of
    // its next steps shows where the time goes.
    auto profile = [marker_source, th = judging_.thresholds](FindingId id) {
      if (!th.ProfiledOnOpening(id)) return;
      marker_source->RequestProfile(Def(id).name, static_cast<int64_t>(th[Th::kProfileSteps]),
                                    th[Th::kProfileBudget]);
    };
    observers_.findings->set_open_handler(
        [marker_source, profile](FindingId id, const FindingSubject&) {
          if (id == FindingId::kStalled) marker_source->RequestStacks("stalled");
          profile(id);
        });
    observers_.findings->set_probe_handler(profile);
  }
  // Reports come from the actions' threads: the sink thread takes them.
  alert_actions_ = StartAlertDelivery(
      judging_.alert_rules, AlertContext{run.name, meta_.host, run_dir_, root_pid},
      [this](Event e) {
        if (sinks_) sinks_->PushEvent(std::move(e));
      },
      observers_.alerts.get());
  observers_.cost = std::make_unique<CostForecaster>(judging_.cost_rates, meta_.gpus);
  SamplerOptions options{config_.sample_hz, config_.interval_s};
  sampler_ = std::make_unique<Sampler>(options, Clock::Default(), std::move(sources.sources),
                                       sinks_.get(), observers_.InTickOrder());
  sampler_->Start();
}

void Session::AddEvent(EventType type, nlohmann::ordered_json fields) {
  if (!sinks_) return;
  sinks_->PushEvent(Event{Clock::Default()->WallSeconds(), type, std::move(fields)});
}

RunSummary Session::Finish(std::optional<int> exit_code, std::optional<int> exit_signal) {
  finished_ = true;
  NoteJobEnd(exit_signal);
  if (sampler_ && !sampler_->Stop()) {
    // Its thread is stuck in a source and may come back: it must find the
    // sampler (and the sources it owns) still there, so it is never freed.
    left_behind_ = sampler_.release();
  }
  Sampler* sampler = sampler_ ? sampler_.get() : left_behind_;
  double end = Clock::Default()->WallSeconds();
  AddEvent(EventType::kEnd, EndEventFields({exit_code, exit_signal}));
  // The alerts resolved as the sampler stopped: deliver them, briefly.
  if (alert_actions_) alert_actions_->Finish(kAlertGrace_s);
  if (sinks_) sinks_->Close();

  RunOutcome outcome;
  outcome.command = command_;
  outcome.run_dir = run_dir_;
  outcome.start_t = sampler != nullptr ? sampler->start_wall() : start_wall_;
  outcome.end_t = end;
  outcome.exit_code = exit_code;
  outcome.exit_signal = exit_signal;
  const JsonlSink* jsonl = exporters_->jsonl();
  outcome.rows_written = jsonl ? jsonl->rows_written() : 0;
  outcome.rows_dropped = sinks_ ? sinks_->dropped_rows() : 0;
  outcome.late_ticks = sampler != nullptr ? sampler->late_ticks() : 0;
  // Monitoring never started: the cost of the run's time alone.
  if (!observers_.cost)
    observers_.cost = std::make_unique<CostForecaster>(judging_.cost_rates, meta_.gpus);
  if (exit_code.has_value() && mode_ == "run") observers_.processes.set_command_ended(StillRunning);
  RunSummary summary =
      CollectSummary(outcome, sampler != nullptr ? sampler->run_row() : Row{}, jsonl, observers_);
  bool written = WriteSummaryFile(run_dir_, summary, kSummaryWait_s);
  if (!config_.quiet) {
    std::string text = FormatSummary(summary, TerminalColumns(STDERR_FILENO));
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  if (config_.report) WriteRunReport(run_dir_, config_.quiet);
  // The run history (trainvitals runs): after summary.json, never failing the run.
  // Written aside where it was opened aside: the caller's end goes on meanwhile.
  if (written) {
    if (!history_) history_ = std::make_unique<HistoryAside>(RunIndexPath(config_.db));
    history_->Index({run_dir_, summary, meta_, judging_.cost_rates});
  }
  return summary;
}

void Session::NoteJobEnd(std::optional<int> exit_signal) {
  JobEnd end;
  end.signal = exit_signal;
  // Read after the job ended: the kernel counts a kill before the process dies.
  std::optional<OomKillWatch::Kills> kills = oom_kills_ ? oom_kills_->Read() : std::nullopt;
  if (kills && kills->count > 0) {
    end.oom_kills = kills->count;
    end.cgroup = kills->cgroup;
    AddEvent(EventType::kOomKill, OomKillEventFields({kills->count, kills->cgroup}));
  }
  if (observers_.findings) observers_.findings->set_job_end(std::move(end));
}

void Session::Abandon() {
  history_.reset();
  if (exporters_) exporters_->Discard();
  std::error_code ec;
  fs::remove(fs::path(run_dir_) / kSamplesFile, ec);
  fs::remove(run_dir_, ec);  // only if empty
}

}  // namespace tv

#include "run/session.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "analysis/judges.h"
#include "core/host.h"
#include "core/thread.h"
#include "run/run_dir.h"
#include "run/run_history.h"
#include "run/sources.h"
#include "run/still_running.h"
#include "sinks/jsonl_sink.h"
#include "sources/markers.h"
#include "views/report/report.h"
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
  thresholds_ = ThresholdsFrom(config_.findings);  // a wrong [findings] entry is a setup error
  alert_rules_ = LoadAlertRules(config_);          // so is a wrong [[alert]] rule
  cost_rates_ = LoadCostRates(config_.cost_file);  // and a wrong [cost] rate
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

nlohmann::ordered_json Session::Meta(int root_pid) const {
  utsname uts{};
  ::uname(&uts);
  std::error_code ec;
  return nlohmann::ordered_json{
      {"schema_version", 1},
      {"trainvitals_version", TRAINVITALS_VERSION},
      {"mode", mode_},
      {"name", RunName()},
      {"command", command_},
      {"cwd", fs::current_path(ec).string()},
      {"host", HostName()},
      {"kernel", fmt::format("{} {}", uts.sysname, uts.release)},
      {"pid", root_pid},
      {"start_t", std::round(start_wall_ * 1000) / 1000},
      {"sample_hz", config_.sample_hz},
      {"interval_s", config_.interval_s},
      {"cpus_online", ::sysconf(_SC_NPROCESSORS_ONLN)},
      {"gpus", nlohmann::ordered_json::array()},
      // The judges of the run (analysis/judges.h), so that `analyze` and
      // `report` reach its verdict without being given its config again.
      {"thresholds", ThresholdsJson(thresholds_)},
      {"alert_rules", AlertRulesJson(alert_rules_ ? *alert_rules_ : std::vector<AlertRule>())},
      {"cost_rates", CostRatesJson(cost_rates_)},
  };
}

void Session::Start(int root_pid) {
  bool ok = RunGuarded("starting the monitor", "the command runs unmonitored",
                       [&] { StartMonitoring(root_pid); });
  if (!ok && sinks_) {
    AddEvent("error", {{"message", "monitoring could not start; the command ran unmonitored"}});
  }
}

void Session::StartMonitoring(int root_pid) {
  std::string dir = run_dir_;
  RunSources sources = MakeSources(config_, root_pid, dir, markers_.get(), markers_error_);
  nlohmann::ordered_json meta = Meta(root_pid);
  if (sources.gpu_info.is_object()) {
    nlohmann::ordered_json driver;
    for (const auto& [key, value] : sources.gpu_info.items()) {
      if (key == "gpus") {
        meta["gpus"] = value;
      } else {
        driver[key] = value;
      }
    }
    meta["gpu_driver"] = driver;
  }
  if (std::string url = exporters_->metrics_url(); !url.empty()) meta["prometheus_url"] = url;
  WriteJsonFile(dir + "/meta.json", meta);
  meta_ = meta;
  if (config_.out.empty()) PointLatestLink(config_.runs_dir, dir);
  ExporterContext context{LiveIdentity{::getpid(), root_pid, mode_, RunName(), command_, dir,
                                       start_wall_, config_.interval_s},
                          &meta_, live_row_, thresholds_[Th::kRepeatLine_s]};
  sinks_ = std::make_unique<SinkThread>(exporters_->MakeSinks(context));
  sinks_->Start();
  AddEvent("start", {{"pid", root_pid}, {"mode", mode_}});
  MarkerSource* marker_source = sources.markers;
  oom_kills_ = sources.oom_kills;
  for (const Notice& n : sources.notices) {
    AddEvent("source_unavailable", {{"source", n.source}, {"message", n.message}});
  }
  SamplerOptions options{config_.sample_hz, config_.interval_s};
  observers_.processes.set_root_pid(root_pid);
  // Each observer on its own: one that fails is turned off, the others go on.
  observers_.findings = std::make_unique<FindingsObserver>(thresholds_, config_.interval_s);
  if (marker_source != nullptr) {
    // The back-channel (docs/markers.md): each memory risk the analysis opens
    // goes to every training process. Both run on the sampler thread; the
    // sampler owns the source and outlives every call of the handler.
    observers_.findings->set_risk_handler(
        [marker_source](const MemoryRisk& risk) { marker_source->PublishRisk(risk); });
  }
  observers_.alerts = std::make_unique<AlertsObserver>(alert_rules_, config_.interval_s);
  if (marker_source != nullptr) {
    // A rule with `stop = true` asks the training processes to stop, through
    // the same back-channel as the memory risks (docs/markers.md).
    observers_.alerts->set_stop_handler(
        [marker_source](const AlertRule& rule) { marker_source->RequestStop(rule.name); });
  }
  StartAlertActions(meta["host"].get<std::string>(), root_pid);
  observers_.cost = std::make_unique<CostForecaster>(cost_rates_, meta_);
  sampler_ = std::make_unique<Sampler>(options, Clock::Default(), std::move(sources.sources),
                                       sinks_.get(), observers_.InTickOrder());
  sampler_->Start();
}

std::string Session::RunName() const {
  return config_.name.empty() ? DefaultRunName(command_) : config_.name;
}

void Session::StartAlertActions(const std::string& host, int root_pid) {
  if (std::none_of(alert_rules_->begin(), alert_rules_->end(),
                   [](const AlertRule& r) { return HasDeliveries(r.actions); })) {
    return;
  }
  AlertContext context{RunName(), host, run_dir_, root_pid};
  // Reports come from the actions' threads: the sink thread takes them.
  alert_actions_ =
      std::make_unique<AlertActions>(alert_rules_, std::move(context), [this](Event e) {
        if (sinks_) sinks_->PushEvent(std::move(e));
      });
  alert_actions_->Start();
  observers_.alerts->set_notify(
      [actions = alert_actions_.get()](AlertNotice n) { actions->Notify(std::move(n)); });
}

void Session::AddEvent(std::string type, nlohmann::ordered_json fields) {
  if (!sinks_) return;
  sinks_->PushEvent(Event{Clock::Default()->WallSeconds(), std::move(type), std::move(fields)});
}

nlohmann::ordered_json Session::Finish(std::optional<int> exit_code,
                                       std::optional<int> exit_signal) {
  finished_ = true;
  NoteJobEnd(exit_signal);
  if (sampler_ && !sampler_->Stop()) {
    // Its thread is stuck in a source and may come back: it must find the
    // sampler (and the sources it owns) still there, so it is never freed.
    left_behind_ = sampler_.release();
  }
  Sampler* sampler = sampler_ ? sampler_.get() : left_behind_;
  double end = Clock::Default()->WallSeconds();
  nlohmann::ordered_json end_fields = {
      {"exit_code", exit_code ? nlohmann::ordered_json(*exit_code) : nlohmann::ordered_json()}};
  if (exit_signal) end_fields["signal"] = *exit_signal;
  AddEvent("end", std::move(end_fields));
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
  nlohmann::ordered_json summary =
      BuildSummary(outcome, sampler != nullptr ? sampler->run_row() : Row{});
  if (jsonl && jsonl->rows_lost() > 0) summary["rows_unwritten"] = jsonl->rows_lost();
  if (jsonl && !jsonl->open_error().empty()) summary["jsonl_error"] = jsonl->open_error();
  // Monitoring never started: the cost of the run's time alone.
  if (!observers_.cost) observers_.cost = std::make_unique<CostForecaster>(cost_rates_, meta_);
  if (exit_code.has_value() && mode_ == "run") observers_.processes.set_command_ended(StillRunning);
  for (const SummaryPart* part : observers_.InSummaryOrder()) part->AddTo(&summary);
  bool written = WriteSummary(summary);
  if (!config_.quiet) {
    std::string text = FormatSummary(summary, TerminalColumns(STDERR_FILENO));
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  if (config_.report) WriteRunReport();
  // The run history (trainvitals runs): after summary.json, never failing the run.
  if (written) IndexFinishedRun(RunIndexPath(config_.db), run_dir_, summary, meta_, cost_rates_);
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
    AddEvent("oom_kill", {{"count", kills->count}, {"cgroup", kills->cgroup}});
  }
  if (observers_.findings) observers_.findings->set_job_end(std::move(end));
}

void Session::WriteRunReport() const {
  // A page the run's owner asked for, not part of the run: a failure is one
  // line and changes nothing else (the exit code stays the command's).
  try {
    ReportRequest request;
    request.run_dir = run_dir_;
    ReportWritten written = WriteReport(request);
    if (!config_.quiet) fmt::print(stderr, "trainvitals: report {}\n", written.path);
  } catch (const std::exception& e) {
    fmt::print(stderr, "trainvitals: no report: {}\n", e.what());
  }
}

bool Session::WriteSummary(const nlohmann::ordered_json& summary) {
  std::string path = run_dir_ + "/summary.json";
  if (WriteJsonFile(path, summary)) return true;
  // Most likely a full disk: the run's one summary is worth a short wait.
  fmt::print(stderr, "trainvitals: waiting up to {:.0f} s for space to write {}\n", kSummaryWait_s,
             path);
  double deadline = Clock::Default()->MonotonicSeconds() + kSummaryWait_s;
  while (Clock::Default()->MonotonicSeconds() < deadline) {
    ::usleep(250'000);
    if (WriteJsonFile(path, summary, /*say=*/false)) {
      fmt::print(stderr, "trainvitals: wrote {}\n", path);
      return true;
    }
  }
  fmt::print(stderr, "trainvitals: gave up writing {}\n", path);
  return false;
}

void Session::Abandon() {
  if (exporters_) exporters_->Discard();
  std::error_code ec;
  fs::remove(fs::path(run_dir_) / "meta.json", ec);
  fs::remove(run_dir_, ec);  // only if empty
}

}  // namespace tv

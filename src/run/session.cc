#include "run/session.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "core/env.h"
#include "core/host.h"
#include "run/run_dir.h"
#include "run/sources.h"
#include "sources/markers.h"
#include "sources/proc_pid_parse.h"
#include "views/summary.h"

namespace tv {
namespace fs = std::filesystem;

Session::Session(Config config, std::vector<std::string> command, std::string mode)
    : config_(std::move(config)), command_(std::move(command)), mode_(std::move(mode)) {
  Validate(config_);
  if (!config_.prometheus.empty()) {
    // Bound here, before the child starts, so a port in use fails the run early.
    metrics_server_ =
        std::make_unique<MetricsServer>(ParseListenAddress("--prometheus", config_.prometheus));
    if (!config_.quiet) {
      fmt::print(stderr, "trainvitals: Prometheus metrics at http://{}:{}/metrics\n",
                 metrics_server_->host(), metrics_server_->port());
    }
  }
  start_wall_ = Clock::Default()->WallSeconds();
  run_dir_ = PrepareRunDir(config_, command_, start_wall_);
  markers_ = MarkerEndpoint::Create(config_.interval_s, &markers_error_);
  if (!config_.tensorboard.empty()) {
    std::string error;
    tfevents_ = TfeventsSink::Open(config_.tensorboard, start_wall_, config_.interval_s, &error);
    if (!tfevents_) {
      Abandon();
      throw ConfigError(error);
    }
  }
  if (!config_.visualdl.empty()) {
    std::string error;
    visualdl_ = VdlSink::Open(config_.visualdl, start_wall_, config_.interval_s, &error);
    if (!visualdl_) {
      Abandon();
      throw ConfigError(error);
    }
  }
}

Session::~Session() {
  if (!finished_ && sampler_) Finish(std::nullopt, std::nullopt);
}

void Session::AddExporters(const nlohmann::ordered_json& meta, std::vector<Sink*>* sinks) {
  if (!metrics_server_ && config_.pushgateway.empty()) return;
  PromLabels labels;
  labels.host = meta["host"].get<std::string>();
  labels.run = config_.name.empty() ? DefaultRunName(command_) : config_.name;
  for (const auto& g : meta["gpus"]) {
    if (!g.is_object() || !g.contains("index")) continue;
    PromGpuLabel label;
    label.index = g["index"].get<int>();
    label.mig_instance = g.value("mig_instance", -1);
    label.model = g.value("name", std::string());
    labels.gpus.push_back(std::move(label));
  }
  if (metrics_server_) {
    prometheus_ = std::make_unique<PrometheusSink>(metrics_server_.get(), labels);
    sinks->push_back(prometheus_.get());
  }
  if (!config_.pushgateway.empty()) {
    pushgateway_ = std::make_unique<PushgatewaySink>(
        ParseHttpUrl("--pushgateway", config_.pushgateway), labels, config_.pushgateway_delete);
    sinks->push_back(pushgateway_.get());
  }
}

nlohmann::ordered_json Session::Meta(int root_pid) const {
  utsname uts{};
  ::uname(&uts);
  std::error_code ec;
  return nlohmann::ordered_json{
      {"schema_version", 1},
      {"trainvitals_version", TRAINVITALS_VERSION},
      {"mode", mode_},
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
  };
}

void Session::Start(int root_pid) {
  std::string dir = run_dir_;
  RunSources sources = MakeSources(config_, root_pid);
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
  if (metrics_server_) {
    meta["prometheus_url"] =
        fmt::format("http://{}:{}/metrics", metrics_server_->host(), metrics_server_->port());
  }
  WriteJsonFile(dir + "/meta.json", meta);
  jsonl_ = std::make_unique<JsonlSink>(dir + "/samples.jsonl", dir + "/events.jsonl");
  std::vector<Sink*> sinks = {&timeline_, jsonl_.get()};
  if (tfevents_) sinks.push_back(tfevents_.get());
  if (visualdl_) sinks.push_back(visualdl_.get());
  if (!config_.quiet) {
    // Inside the training process the terminal belongs to the framework's own
    // progress bars: no live line there, only the notices and epoch lines.
    bool live = ::isatty(STDERR_FILENO) != 0 && mode_ != "python";
    status_ = std::make_unique<StatusLine>(STDERR_FILENO, live);
    sinks.push_back(status_.get());
  }
  AddExporters(meta, &sinks);
  sinks_ = std::make_unique<SinkThread>(std::move(sinks));
  sinks_->Start();
  AddEvent("start", {{"pid", root_pid}, {"mode", mode_}});
  if (markers_) {
    sources.sources.push_back(std::make_unique<MarkerSource>(markers_.get()));
  } else {
    sources.notices.push_back({"markers", markers_error_});
  }
  for (const Notice& n : sources.notices) {
    AddEvent("source_unavailable", {{"source", n.source}, {"message", n.message}});
  }
  SamplerOptions options{config_.sample_hz, config_.interval_s};
  processes_.set_root_pid(root_pid);
  sampler_ = std::make_unique<Sampler>(options, Clock::Default(), std::move(sources.sources),
                                       sinks_.get(), &observers_);
  sampler_->Start();
}

void Session::AddEvent(std::string type, nlohmann::ordered_json fields) {
  if (!sinks_) return;
  sinks_->PushEvent(Event{Clock::Default()->WallSeconds(), std::move(type), std::move(fields)});
}

nlohmann::ordered_json Session::Finish(std::optional<int> exit_code,
                                       std::optional<int> exit_signal) {
  finished_ = true;
  sampler_->Stop();
  double end = Clock::Default()->WallSeconds();
  nlohmann::ordered_json end_fields = {
      {"exit_code", exit_code ? nlohmann::ordered_json(*exit_code) : nlohmann::ordered_json()}};
  if (exit_signal) end_fields["signal"] = *exit_signal;
  AddEvent("end", std::move(end_fields));
  sinks_->Close();

  RunOutcome outcome;
  outcome.command = command_;
  outcome.run_dir = run_dir_;
  outcome.start_t = sampler_->start_wall();
  outcome.end_t = end;
  outcome.exit_code = exit_code;
  outcome.exit_signal = exit_signal;
  outcome.rows_written = jsonl_->rows_written();
  outcome.rows_dropped = sinks_->dropped_rows();
  outcome.late_ticks = sampler_->late_ticks();
  nlohmann::ordered_json summary = BuildSummary(outcome, sampler_->run_row());
  summary["epochs"] = phases_.Epochs();
  summary["phases"] = phases_.Phases();
  AddProcesses(exit_code.has_value() && mode_ == "run", &summary);
  WriteJsonFile(run_dir_ + "/summary.json", summary);
  if (!config_.quiet) {
    std::string text = FormatSummary(summary);
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  return summary;
}

void Session::AddProcesses(bool ended, nlohmann::ordered_json* summary) const {
  auto& s = *summary;
  s["processes"] = processes_.Top(5);
  if (ended) {
    s["leaked"] = processes_.StillRunning([](int pid, const std::string& name) {
      std::string stat;
      if (!Env::Default()->ReadFile(fmt::format("/proc/{}/stat", pid).c_str(), &stat).ok())
        return false;
      std::optional<ProcStat> st = ParseProcStat(stat);
      return st && st->state != 'Z' && st->comm == name;
    });
  }
  if (nlohmann::ordered_json e = processes_.Exception(); !e.is_null()) s["exception"] = e;
}

void Session::Abandon() {
  if (tfevents_) tfevents_->Discard();
  if (visualdl_) visualdl_->Discard();
  std::error_code ec;
  fs::remove(fs::path(run_dir_) / "meta.json", ec);
  fs::remove(run_dir_, ec);  // only if empty
}

}  // namespace tv

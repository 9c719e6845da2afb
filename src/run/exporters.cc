#include "run/exporters.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "core/endpoint.h"
#include "run/live_dir.h"
#include "run/run_dir.h"
#include "sinks/jsonl_sink.h"
#include "sinks/metrics_server.h"
#include "sinks/prometheus_sink.h"
#include "sinks/pushgateway_sink.h"
#include "sinks/tfevents/requested_tfevents.h"
#include "sinks/tfevents/tfevents_sink.h"
#include "sinks/visualdl/vdl_sink.h"
#include "views/status_line.h"

namespace tv {

Exporters::Exporters(Config config) : config_(std::move(config)) {
  if (config_.prometheus.empty()) return;
  metrics_server_ =
      std::make_unique<MetricsServer>(ParseListenAddress("--prometheus", config_.prometheus));
  if (!config_.quiet) {
    fmt::print(stderr, "trainvitals: Prometheus metrics at http://{}:{}/metrics\n",
               metrics_server_->host(), metrics_server_->port());
  }
}

Exporters::~Exporters() = default;

std::string Exporters::OpenBoards(double start_wall) {
  start_wall_ = start_wall;
  std::string error;
  if (!config_.tensorboard.empty()) {
    tfevents_ = TfeventsSink::Open(config_.tensorboard, start_wall, config_.interval_s, &error);
    if (!tfevents_) return error;
  }
  if (!config_.visualdl.empty()) {
    visualdl_ = VdlSink::Open(config_.visualdl, start_wall, config_.interval_s, &error);
    if (!visualdl_) return error;
  }
  return "";
}

std::vector<Sink*> Exporters::MakeSinks(const ExporterContext& context) {
  const std::string& dir = context.identity.run_dir;
  jsonl_ = std::make_unique<JsonlSink>(dir + "/" + kSamplesFile, dir + "/events.jsonl");
  std::vector<Sink*> sinks = {jsonl_.get()};
  if (tfevents_) sinks.push_back(tfevents_.get());
  if (visualdl_) sinks.push_back(visualdl_.get());
  if (!config_.quiet) {
    // Inside the training process the terminal belongs to the framework's own
    // progress bars: no live line there (no row set), only the notices and
    // epoch lines.
    status_ = std::make_unique<StatusLine>(STDERR_FILENO, context.live_row);
    status_->set_finding_repeat_s(context.finding_repeat_s);
    sinks.push_back(status_.get());
  }
  std::string live_error;
  if (std::string live_dir = LiveSessionsDir(true, &live_error); !live_dir.empty()) {
    // `trainvitals top` lists the session while it runs.
    live_ = std::make_unique<LiveFile>(live_dir, context.identity);
    sinks.push_back(live_.get());
  }
  requested_tfevents_ = std::make_unique<RequestedTfevents>(
      config_.tensorboard, start_wall_, config_.interval_s, [this](const std::string& line) {
        if (status_) status_->Say(line);
      });
  sinks.push_back(requested_tfevents_.get());
  AddPrometheus(context, &sinks);
  return sinks;
}

void Exporters::AddPrometheus(const ExporterContext& context, std::vector<Sink*>* sinks) {
  if (!metrics_server_ && config_.pushgateway.empty()) return;
  const MetaRecord& meta = *context.meta;
  PromLabels labels;
  labels.host = meta.host;
  labels.run = context.identity.name;
  if (meta.job) labels.job = meta.job->job;
  for (const GpuInfo& g : meta.gpus) {
    PromGpuLabel label;
    label.index = g.index;
    label.mig_instance = g.mig_instance;
    label.model = g.name;
    labels.gpus.push_back(std::move(label));
  }
  // Names of other processes on the GPUs stay on this machine unless asked.
  labels.outside_process_names = config_.prometheus_process_names;
  if (metrics_server_) {
    PromLabels served = labels;
    served.outside_process_names |= IsLoopbackHost(metrics_server_->host());
    prometheus_ = std::make_unique<PrometheusSink>(metrics_server_.get(), std::move(served));
    sinks->push_back(prometheus_.get());
  }
  if (!config_.pushgateway.empty()) {
    pushgateway_ = std::make_unique<PushgatewaySink>(
        ParseHttpUrl("--pushgateway", config_.pushgateway), labels, config_.pushgateway_delete);
    sinks->push_back(pushgateway_.get());
  }
}

void Exporters::Discard() {
  if (tfevents_) tfevents_->Discard();
  if (visualdl_) visualdl_->Discard();
}

std::string Exporters::metrics_url() const {
  if (!metrics_server_) return "";
  return fmt::format("http://{}:{}/metrics", metrics_server_->host(), metrics_server_->port());
}

}  // namespace tv

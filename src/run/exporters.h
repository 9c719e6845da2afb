// Exporters: every sink a run writes its rows and events to, made from the
// config in one place: samples.jsonl and events.jsonl (always), --tensorboard's
// and --visualdl's files, the status line (unless quiet), the live file that
// `trainvitals top` reads, the tfevents a training asks for through markers,
// the --prometheus endpoint and the --pushgateway pushes.
//
// Two steps: the constructor and OpenBoards do what must fail before the
// child starts (a port in use, a directory that cannot be written); MakeSinks
// makes the rest once meta.json is known (the exporters' labels).
//
// Thread safety: all methods on the controlling thread; the sinks themselves
// run on the sink thread (core/sink_thread.h), which must be closed before
// this object goes.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/sink.h"
#include "sinks/live_file.h"
#include "store/meta_record.h"

namespace tv {

class JsonlSink;
class MetricsServer;
class PrometheusSink;
class PushgatewaySink;
class RequestedTfevents;
class StatusLine;
class TerminalRow;
class TfeventsSink;
class VdlSink;

// What the sinks know of the run besides the config.
struct ExporterContext {
  LiveIdentity identity;            // the run: its directory, name, command, ...
  const MetaRecord* meta;           // meta.json: the host and the GPUs, as labels
  TerminalRow* live_row = nullptr;  // the status line's row; none: notices only
  double finding_repeat_s = 0;      // how often the status line repeats a finding
};

class Exporters {
 public:
  // Binds --prometheus's port and says where its metrics are (unless quiet).
  // Throws ConfigError on a wrong address or a port in use.
  explicit Exporters(Config config);
  ~Exporters();

  // Opens --tensorboard's and --visualdl's files; an error when one cannot be.
  std::string OpenBoards(double start_wall);

  // Makes every other sink the config asks for and returns all of them, in
  // the order the sink thread feeds them: samples.jsonl first.
  std::vector<Sink*> MakeSinks(const ExporterContext& context);

  // The command never started: removes the board files opened.
  void Discard();

  // http://host:port/metrics of --prometheus; empty when not asked for.
  std::string metrics_url() const;
  // samples.jsonl's sink; null before MakeSinks.
  const JsonlSink* jsonl() const { return jsonl_.get(); }

 private:
  // The Prometheus and Pushgateway sinks, when asked for; labels from `meta`.
  void AddPrometheus(const ExporterContext& context, std::vector<Sink*>* sinks);

  Config config_;
  double start_wall_ = 0;
  std::unique_ptr<MetricsServer> metrics_server_;
  std::unique_ptr<TfeventsSink> tfevents_;
  std::unique_ptr<VdlSink> visualdl_;
  std::unique_ptr<JsonlSink> jsonl_;
  std::unique_ptr<StatusLine> status_;
  std::unique_ptr<LiveFile> live_;
  std::unique_ptr<RequestedTfevents> requested_tfevents_;  // a training's log_dir (markers)
  std::unique_ptr<PrometheusSink> prometheus_;
  std::unique_ptr<PushgatewaySink> pushgateway_;
};

}  // namespace tv

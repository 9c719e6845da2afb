// PrometheusSink: renders each row for Prometheus (both formats) and hands the
// result to a MetricsServer. Rendering happens here, on the sink thread, once
// per row; scrapes only copy the finished text.
//
// Thread safety: used on the sink thread only.
#pragma once

#include "core/sink.h"
#include "sinks/metrics_server.h"
#include "sinks/prom_text.h"

namespace tv {

class PrometheusSink final : public Sink {
 public:
  // `server` must outlive the sink.
  PrometheusSink(MetricsServer* server, PromLabels labels)
      : server_(server), labels_(std::move(labels)) {}
  void OnRow(const Row& row) override {
    auto snap = std::make_shared<PromSnapshot>();
    snap->text = RenderPrometheus(row, labels_, PromFormat::kText004);
    snap->openmetrics = RenderPrometheus(row, labels_, PromFormat::kOpenMetrics);
    server_->Publish(std::move(snap));
  }

 private:
  MetricsServer* server_;
  PromLabels labels_;
};

}  // namespace tv

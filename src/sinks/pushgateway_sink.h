// PushgatewaySink: pushes the latest row to a Prometheus Pushgateway with
// PUT <url>/metrics/job/<run>/instance/<host> (for a run of a job:
// .../job/<job id>/instance/<host>/run/<run>; text format, no timestamps),
// each row and once more at the end of the run. Pushes run on the sink's own
// thread with short timeouts, so an unreachable gateway never delays the sink
// thread or the sampler; only the newest row waits, older ones are replaced.
// Failures are said once per kind on stderr and retried with backoff
// (1 s doubling to 60 s). With `delete_at_end`, the group is deleted when the
// command exited 0, so a failed run's last values stay visible.
//
// Pushes run on the thread "tv-push". Thread safety: Sink methods on the sink
// thread only.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "core/endpoint.h"
#include "core/sink.h"
#include "sinks/prom_text.h"

namespace tv {

class PushgatewaySink final : public Sink {
 public:
  PushgatewaySink(HttpUrl url, PromLabels labels, bool delete_at_end);
  ~PushgatewaySink() override;
  void OnRow(const Row& row) override;
  void OnEvent(const Event& event) override;
  // Pushes the last row, deletes the group if asked, joins the thread.
  void OnClose() override;

 private:
  void Loop();
  // One request; never throws (a fault counts as a failed push).
  bool Send(const char* method, const std::string* body);
  bool TrySend(const char* method, const std::string* body);
  void Fail(const std::string& kind, const std::string& message);

  HttpUrl url_;
  std::string group_path_;
  PromLabels labels_;
  bool delete_at_end_;
  std::optional<int> exit_code_;  // from the "end" event
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<std::string> pending_;
  bool closing_ = false;
  std::set<std::string> failed_kinds_;  // worker thread only
  bool failing_ = false;                // worker thread only
  std::thread thread_;
};

// Path of a Pushgateway group: /metrics/job/<job>/instance/<instance>, then
// /run/<run> when `run` is given; values that are not plain [A-Za-z0-9_.-]
// written as label@base64/<base64url>.
std::string PushgatewayGroupPath(std::string_view job, std::string_view instance,
                                 std::string_view run = {});

// The group of a run's pushes: job=<run name>, instance=<host>; for a run
// that belongs to a job, job=<job id>, instance=<host>, run=<run name> (the
// gateway sets each pushed series' job label to its group's, so the job's id
// must be the group's to reach Prometheus; one group a run of the job).
std::string PushgatewayGroupPath(const PromLabels& labels);

}  // namespace tv

// AlertActions: delivers alert notices to what each rule asks for (docs/alerts.md):
// a command (argv, no shell, TRAINVITALS_ALERT_* environment, the alert's JSON
// on stdin, a timeout, output kept in <run_dir>/alerts/, at most one running per
// rule), a webhook (POST, timeouts, retries with backoff), an Alertmanager
// (/api/v2/alerts, firing alerts re-sent while they fire, resolved ones with
// endsAt) and a signal to the job. All on threads of its own: Notify never
// blocks, so a hung webhook or command costs the run nothing.
//
// Thread safety: Notify from the sampler thread; Start and Finish from the
// session's controlling thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/alerts/notice.h"
#include "core/event.h"

namespace tv {

class AlertActions {
 public:
  // Notices waiting per action of a rule; when full, the oldest gives way.
  static constexpr size_t kQueueCapacity = 64;

  // `report`: called (from the actions' threads, and from Finish) with an
  // event to record: "alert_action_failed" {alert, action, message}, said once
  // per rule and action, and "alert_notices_lost" {count, actions: [{alert,
  // action, count, failed, queue_full, run_ended}]}, said once by Finish when
  // a notice never reached its action. The session writes them to
  // events.jsonl and stderr.
  AlertActions(std::shared_ptr<const std::vector<AlertRule>> rules, AlertContext context,
               std::function<void(Event)> report);
  ~AlertActions();

  void Start();
  // Queues `notice` for its rule's actions and returns at once (the queue is
  // bounded: when full, the oldest undelivered notice of the same rule gives way).
  void Notify(AlertNotice notice);
  // Delivers what is queued (resolved notices included) for up to `grace_s`;
  // then a command still running gets SIGTERM, SIGKILL 2 s later, and is
  // waited for; a post still waiting for its answer is abandoned. Reports the
  // notices lost, then nothing more.
  void Finish(double grace_s);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tv

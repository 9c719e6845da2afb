// The parts of AlertActions (actions.h) shared by its files: the hub every
// action thread holds, and one action of one rule (a command, a webhook, an
// Alertmanager, a signal) as its thread drives it.
//
// Thread safety: ActionHub is safe from any thread. An Action is used by its
// own thread only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "analysis/alerts/notice.h"
#include "core/event.h"

namespace tv::alert_actions {

using SteadyClock = std::chrono::steady_clock;

// What the action threads share. Held by shared_ptr by each of them, so a
// thread abandoned at the end of the run never touches freed memory; it keeps
// the rules alive (notices point into them).
class ActionHub {
 public:
  ActionHub(std::shared_ptr<const std::vector<AlertRule>> rules, AlertContext context,
            std::function<void(Event)> report);

  const std::vector<AlertRule>& rules() const { return *rules_; }
  const AlertContext& context() const { return context_; }

  // Hands `event` to the report callback; nothing once abandoned.
  void Report(Event event);
  // Waits `duration`; false (at once) when the actions are stopped meanwhile.
  bool Sleep(SteadyClock::duration duration);
  // The run is over: running commands are stopped, waits end, queued notices
  // are not delivered; reports still go.
  void Stop();
  bool stopping() const;
  bool abandoned() const;
  // After Stop: what still runs reports no more (the report callback's owner
  // may be gone).
  void Abandon();

 private:
  std::shared_ptr<const std::vector<AlertRule>> rules_;
  AlertContext context_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool abandoned_ = false;
  std::mutex report_mu_;  // held while report_ runs, so Abandon outwaits it
  std::function<void(Event)> report_;
};

// One action of one rule; its thread calls Deliver for each notice in order,
// and Wake when NextWake has come. Once the hub is stopping, an action ends
// what it runs within StopGrace.
class Action {
 public:
  Action(std::shared_ptr<ActionHub> hub, const AlertRule& rule, const char* kind)
      : hub_(std::move(hub)), rule_(rule), kind_(kind) {}
  virtual ~Action() = default;

  // False when `notice` did not reach its destination (a POST that failed, a
  // command that could not be run, a signal that could not be sent).
  virtual bool Deliver(const AlertNotice& notice) = 0;
  // When this action wants to run without a notice (Alertmanager's resend).
  virtual std::optional<SteadyClock::time_point> NextWake() const { return std::nullopt; }
  virtual void Wake() {}
  // How long, once the hub is stopping, this action may take to end what it
  // runs; Finish waits that long for it (0: it is not waited for).
  virtual SteadyClock::duration StopGrace() const { return SteadyClock::duration::zero(); }

  const char* kind() const { return kind_; }
  const AlertRule& rule() const { return rule_; }
  const AlertContext& context() const { return hub_->context(); }
  // Reports alert_action_failed {alert, action, message}: the first time only.
  void Fail(const std::string& message);

 protected:
  ActionHub& hub() { return *hub_; }

 private:
  std::shared_ptr<ActionHub> hub_;
  const AlertRule& rule_;
  const char* kind_;
  bool failure_reported_ = false;
};

std::unique_ptr<Action> MakeCommandAction(std::shared_ptr<ActionHub> hub, const AlertRule& rule);
std::unique_ptr<Action> MakeWebhookAction(std::shared_ptr<ActionHub> hub, const AlertRule& rule);
std::unique_ptr<Action> MakeAlertmanagerAction(std::shared_ptr<ActionHub> hub,
                                               const AlertRule& rule);
std::unique_ptr<Action> MakeSignalAction(std::shared_ptr<ActionHub> hub, const AlertRule& rule);

// Unix seconds now.
double UnixNow();
// "2026-11-30T19:04:05.250Z".
std::string Rfc3339(double unix_s);
// A value in base units as the environment and annotations carry it: "0.15".
std::string FormatValue(double value);

}  // namespace tv::alert_actions

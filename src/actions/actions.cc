#include "actions/actions.h"

#include <fmt/format.h>
#include <signal.h>
#include <string.h>

#include <cerrno>
#include <deque>
#include <thread>

#include "actions/actions_internal.h"
#include "core/thread.h"
#include "store/alert_record.h"

namespace tv {
namespace alert_actions {

ActionHub::ActionHub(std::shared_ptr<const std::vector<AlertRule>> rules, AlertContext context,
                     std::function<void(Event)> report)
    : rules_(std::move(rules)), context_(std::move(context)), report_(std::move(report)) {}

void ActionHub::Report(Event event) {
  std::lock_guard<std::mutex> lock(report_mu_);
  if (abandoned() || !report_) return;
  try {
    report_(std::move(event));
  } catch (...) {  // the recorder's fault must not end an action thread
  }
}

bool ActionHub::Sleep(SteadyClock::duration duration) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, duration, [this] { return stopping_; });
}

void ActionHub::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopping_ = true;
  cv_.notify_all();
}

bool ActionHub::stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

bool ActionHub::abandoned() const {
  std::lock_guard<std::mutex> lock(mu_);
  return abandoned_;
}

void ActionHub::Abandon() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    abandoned_ = true;
    cv_.notify_all();
  }
  std::lock_guard<std::mutex> wait_for_report(report_mu_);  // one under way ends first
}

void Action::Fail(const std::string& message) {
  if (failure_reported_) return;
  failure_reported_ = true;
  hub_->Report(AlertEvent(AlertActionFailedRecord{
      .t = UnixNow(), .alert = rule_.name, .action = kind_, .message = message}));
}

double UnixNow() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string Rfc3339(double unix_s) {
  auto whole = static_cast<time_t>(unix_s);
  int ms = static_cast<int>((unix_s - static_cast<double>(whole)) * 1000);
  if (ms < 0) ms = 0;
  if (ms > 999) ms = 999;
  tm utc{};
  gmtime_r(&whole, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, ms);
}

std::string FormatValue(double value) { return fmt::format("{}", value); }

namespace {

std::string SignalName(int sig) {
  if (sig == SIGTERM) return "SIGTERM";
  if (sig == SIGINT) return "SIGINT";
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

// Sends the rule's signal to the job when the alert begins firing, and puts
// it on record (an alert_action event).
class SignalAction final : public Action {
 public:
  using Action::Action;

  bool Deliver(const AlertNotice& notice) override {
    if (notice.state != AlertNotice::State::kFiring) return true;
    int pid = hub().context().job_pid;
    if (pid <= 0) return true;
    int sig = rule().actions.signal;
    if (::kill(pid, sig) != 0) {
      Fail(fmt::format("cannot send {} to the job (pid {}): {}", SignalName(sig), pid,
                       strerror(errno)));
      return false;
    }
    hub().Report(AlertEvent(AlertActionRecord{.t = UnixNow(),
                                              .alert = rule().name,
                                              .action = "signal",
                                              .signal = SignalName(sig),
                                              .pid = pid}));
    return true;
  }
};

// Notices of one action that never reached it, by why.
struct LostNotices {
  int64_t failed = 0;      // its delivery failed (said by alert_action_failed)
  int64_t queue_full = 0;  // the queue was full: the oldest gave way
  int64_t run_ended = 0;   // still queued, or under way, when the run ended
  int64_t total() const { return failed + queue_full + run_ended; }
};

// One action of one rule, its queue and its thread.
struct Channel {
  std::unique_ptr<Action> action;
  std::shared_ptr<ActionHub> hub;
  const char* thread_name = "tv-alert";

  std::mutex mu;
  std::condition_variable cv;  // a notice, finishing, or abandon
  std::deque<AlertNotice> queue;
  LostNotices lost;
  bool in_flight = false;  // a notice is being delivered
  bool given_up = false;   // Finish counted what was left as lost
  bool finishing = false;
  bool done = false;
  std::condition_variable done_cv;
  std::thread thread;
};

// Counts what is still queued as lost at the end of the run; under c.mu.
void DropQueue(Channel& c) {
  c.lost.run_ended += static_cast<int64_t>(c.queue.size());
  c.queue.clear();
}

void MarkDone(Channel& c) {
  std::lock_guard<std::mutex> lock(c.mu);
  c.done = true;
  c.done_cv.notify_all();
}

void BlockSigpipe() {
  // A command that exits before reading its stdin, or a TLS peer gone, must
  // not end the process: EPIPE instead.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void RunChannel(const std::shared_ptr<Channel>& c) {
  struct DoneOnExit {
    Channel& c;
    ~DoneOnExit() { MarkDone(c); }
  } done_on_exit{*c};
  BlockSigpipe();
  for (;;) {
    std::optional<AlertNotice> notice;
    {
      std::unique_lock<std::mutex> lock(c->mu);
      for (;;) {
        if (c->hub->stopping()) {
          DropQueue(*c);
          return;
        }
        if (!c->queue.empty()) {
          notice = std::move(c->queue.front());
          c->queue.pop_front();
          c->in_flight = true;
          break;
        }
        if (c->finishing) return;
        std::optional<SteadyClock::time_point> wake = c->action->NextWake();
        if (wake && *wake <= SteadyClock::now()) break;
        if (wake) {
          c->cv.wait_until(lock, *wake);
        } else {
          c->cv.wait(lock);
        }
      }
    }
    bool delivered = true;
    try {
      if (notice) {
        delivered = c->action->Deliver(*notice);
      } else {
        c->action->Wake();
      }
    } catch (...) {
      delivered = false;
      c->action->Fail(CurrentExceptionText());
    }
    std::lock_guard<std::mutex> lock(c->mu);
    if (notice && !delivered && !c->given_up) {
      ++(c->hub->stopping() ? c->lost.run_ended : c->lost.failed);
    }
    c->in_flight = false;
  }
}

// One alert_notices_lost event for the notices `channels` lost, if any.
std::optional<Event> LostEvent(const std::vector<std::shared_ptr<Channel>>& channels) {
  AlertNoticesLostRecord lost;
  for (const auto& c : channels) {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->lost.total() == 0) continue;
    lost.count += c->lost.total();
    lost.actions.push_back({.alert = c->action->rule().name,
                            .action = c->action->kind(),
                            .count = c->lost.total(),
                            .failed = c->lost.failed,
                            .queue_full = c->lost.queue_full,
                            .run_ended = c->lost.run_ended});
  }
  if (lost.count == 0) return std::nullopt;
  lost.t = UnixNow();
  return AlertEvent(lost);
}

}  // namespace

std::unique_ptr<Action> MakeSignalAction(std::shared_ptr<ActionHub> hub, const AlertRule& rule) {
  return std::make_unique<SignalAction>(std::move(hub), rule, "signal");
}

}  // namespace alert_actions

using alert_actions::ActionHub;
using alert_actions::Channel;

struct AlertActions::Impl {
  std::shared_ptr<ActionHub> hub;
  // by_rule[i]: the channels of rules[i] (one per action it has).
  std::vector<std::vector<std::shared_ptr<Channel>>> by_rule;
  bool started = false;
  bool finished = false;

  const std::vector<std::shared_ptr<Channel>>* ChannelsOf(const AlertRule* rule) const {
    const std::vector<AlertRule>& rules = hub->rules();
    if (rule == nullptr) return nullptr;
    if (!rules.empty() && rule >= rules.data() && rule < rules.data() + rules.size()) {
      return &by_rule[static_cast<size_t>(rule - rules.data())];
    }
    for (size_t i = 0; i < rules.size(); ++i) {
      if (rules[i].name == rule->name) return &by_rule[i];
    }
    return nullptr;
  }
};

AlertActions::AlertActions(std::shared_ptr<const std::vector<AlertRule>> rules,
                           AlertContext context, std::function<void(Event)> report)
    : impl_(std::make_unique<Impl>()) {
  using namespace alert_actions;
  if (!rules) rules = std::make_shared<const std::vector<AlertRule>>();
  impl_->hub = std::make_shared<ActionHub>(rules, std::move(context), std::move(report));
  impl_->by_rule.resize(rules->size());
  for (size_t i = 0; i < rules->size(); ++i) {
    const AlertRule& rule = (*rules)[i];
    auto add = [&](std::unique_ptr<Action> action, const char* thread_name) {
      auto c = std::make_shared<Channel>();
      c->action = std::move(action);
      c->hub = impl_->hub;
      c->thread_name = thread_name;
      impl_->by_rule[i].push_back(std::move(c));
    };
    if (!rule.actions.command.empty()) add(MakeCommandAction(impl_->hub, rule), "tv-alert-cmd");
    if (!rule.actions.webhook.empty()) add(MakeWebhookAction(impl_->hub, rule), "tv-alert-hook");
    if (!rule.actions.alertmanager.empty()) {
      add(MakeAlertmanagerAction(impl_->hub, rule), "tv-alert-am");
    }
    if (rule.actions.signal != 0) add(MakeSignalAction(impl_->hub, rule), "tv-alert-sig");
  }
}

AlertActions::~AlertActions() { Finish(0); }

void AlertActions::Start() {
  if (impl_->started || impl_->finished) return;
  impl_->started = true;
  for (auto& channels : impl_->by_rule) {
    for (auto& c : channels) {
      std::shared_ptr<Channel> held = c;  // the thread's own reference
      c->thread = StartThread(c->thread_name, "this alert action stops",
                              [held] { alert_actions::RunChannel(held); });
    }
  }
}

void AlertActions::Notify(AlertNotice notice) {
  const auto* channels = impl_->ChannelsOf(notice.rule);
  if (channels == nullptr || channels->empty()) return;
  auto push = [](Channel& c, AlertNotice&& n) {
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.finishing) {
      ++c.lost.run_ended;
      return;
    }
    if (c.queue.size() >= kQueueCapacity) {
      c.queue.pop_front();
      ++c.lost.queue_full;
    }
    c.queue.push_back(std::move(n));
    c.cv.notify_one();
  };
  for (size_t i = 0; i + 1 < channels->size(); ++i) push(*(*channels)[i], AlertNotice(notice));
  push(*channels->back(), std::move(notice));
}

void AlertActions::Finish(double grace_s) {
  using alert_actions::SteadyClock;
  if (impl_->finished) return;
  impl_->finished = true;
  auto seconds = [](double s) {
    return std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(std::max(0.0, s)));
  };
  auto deadline = SteadyClock::now() + seconds(grace_s);
  std::vector<std::shared_ptr<Channel>> all;
  for (auto& channels : impl_->by_rule) {
    for (auto& c : channels) {
      std::lock_guard<std::mutex> lock(c->mu);
      c->finishing = true;
      c->cv.notify_all();
      all.push_back(c);
    }
  }
  auto wait_done = [](Channel& c, SteadyClock::time_point until) {
    std::unique_lock<std::mutex> lock(c.mu);
    return c.done_cv.wait_until(lock, until, [&] { return c.done; });
  };
  if (impl_->started) {
    // The grace: what is queued is delivered.
    for (auto& c : all) wait_done(*c, deadline);
  }
  // The end: commands are stopped (SIGTERM, then SIGKILL) and waited for.
  impl_->hub->Stop();
  auto stopped = SteadyClock::now();
  for (auto& c : all) {
    c->cv.notify_all();
    if (impl_->started) wait_done(*c, stopped + c->action->StopGrace());
  }
  for (auto& c : all) {
    std::lock_guard<std::mutex> lock(c->mu);
    if (c->done) continue;
    alert_actions::DropQueue(*c);
    if (c->in_flight) ++c->lost.run_ended;  // abandoned under way
    c->given_up = true;
  }
  if (std::optional<Event> lost = alert_actions::LostEvent(all)) impl_->hub->Report(*lost);
  impl_->hub->Abandon();  // no reports after this
  for (auto& c : all) {
    bool done;
    {
      std::lock_guard<std::mutex> lock(c->mu);
      done = c->done;
    }
    if (!c->thread.joinable()) continue;
    if (done) {
      c->thread.join();
    } else {
      c->thread.detach();  // hung: it holds its Channel and the hub, never Impl
    }
  }
}

}  // namespace tv

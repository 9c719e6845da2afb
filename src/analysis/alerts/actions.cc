#include "analysis/alerts/actions.h"

#include <fmt/format.h>
#include <signal.h>
#include <string.h>

#include <cerrno>
#include <deque>
#include <thread>

#include "analysis/alerts/actions_internal.h"
#include "core/thread.h"

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
  return !cv_.wait_for(lock, duration, [this] { return abandoned_; });
}

bool ActionHub::abandoned() const {
  std::lock_guard<std::mutex> lock(mu_);
  return abandoned_;
}

void ActionHub::Abandon() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    abandoned_ = true;
    cv_.notify_all();
  }
  std::lock_guard<std::mutex> wait_for_report(report_mu_);  // one under way ends first
}

void Action::Fail(const std::string& message) {
  if (failure_reported_) return;
  failure_reported_ = true;
  Event e;
  e.t = UnixNow();
  e.type = "alert_action_failed";
  e.fields["alert"] = rule_.name;
  e.fields["action"] = kind_;
  e.fields["message"] = message;
  hub_->Report(std::move(e));
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

  void Deliver(const AlertNotice& notice) override {
    if (notice.state != AlertNotice::State::kFiring) return;
    int pid = hub().context().job_pid;
    if (pid <= 0) return;
    int sig = rule().actions.signal;
    if (::kill(pid, sig) != 0) {
      Fail(fmt::format("cannot send {} to the job (pid {}): {}", SignalName(sig), pid,
                       strerror(errno)));
      return;
    }
    Event e;
    e.t = UnixNow();
    e.type = "alert_action";
    e.fields["alert"] = rule().name;
    e.fields["action"] = "signal";
    e.fields["signal"] = SignalName(sig);
    e.fields["pid"] = pid;
    hub().Report(std::move(e));
  }
};

// One action of one rule, its queue and its thread.
struct Channel {
  std::unique_ptr<Action> action;
  std::shared_ptr<ActionHub> hub;
  const char* thread_name = "tv-alert";

  std::mutex mu;
  std::condition_variable cv;  // a notice, finishing, or abandon
  std::deque<AlertNotice> queue;
  bool finishing = false;
  bool done = false;
  std::condition_variable done_cv;
  std::thread thread;
};

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
        if (c->hub->abandoned()) return;
        if (!c->queue.empty()) {
          notice = std::move(c->queue.front());
          c->queue.pop_front();
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
    try {
      if (notice) {
        c->action->Deliver(*notice);
      } else {
        c->action->Wake();
      }
    } catch (...) {
      c->action->Fail(CurrentExceptionText());
    }
  }
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
    if (c.finishing) return;
    if (c.queue.size() >= kQueueCapacity) c.queue.pop_front();
    c.queue.push_back(std::move(n));
    c.cv.notify_one();
  };
  for (size_t i = 0; i + 1 < channels->size(); ++i) push(*(*channels)[i], AlertNotice(notice));
  push(*channels->back(), std::move(notice));
}

void AlertActions::Finish(double grace_s) {
  if (impl_->finished) return;
  impl_->finished = true;
  auto deadline = alert_actions::SteadyClock::now() +
                  std::chrono::duration_cast<alert_actions::SteadyClock::duration>(
                      std::chrono::duration<double>(std::max(0.0, grace_s)));
  std::vector<std::shared_ptr<Channel>> all;
  for (auto& channels : impl_->by_rule) {
    for (auto& c : channels) {
      std::lock_guard<std::mutex> lock(c->mu);
      c->finishing = true;
      c->cv.notify_all();
      all.push_back(c);
    }
  }
  if (!impl_->started) {
    impl_->hub->Abandon();
    return;
  }
  for (auto& c : all) {
    // Done when the thread returned; joinable threads that are done join at once.
    std::unique_lock<std::mutex> lock(c->mu);
    c->done_cv.wait_until(lock, deadline, [&] { return c->done; });
  }
  impl_->hub->Abandon();  // wakes retries' waits and running commands; no reports after this
  for (auto& c : all) {
    bool done;
    {
      std::lock_guard<std::mutex> lock(c->mu);
      done = c->done;
      c->cv.notify_all();
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

#include "views/alert_lines.h"

#include <fmt/format.h>

#include <string_view>

#include "core/escape.h"
#include "core/format.h"

namespace tv {
namespace {

std::string_view Name(const std::string& alert) {
  return alert.empty() ? std::string_view("?") : std::string_view(alert);
}

std::string Who(const std::string& alert, std::optional<int> gpu) {
  if (gpu) return fmt::format("{} (GPU {})", Name(alert), *gpu);
  return std::string(Name(alert));
}

std::string_view ActionName(const std::string& action) {
  return action.empty() ? std::string_view("action") : std::string_view(action);
}

std::string AlertLine(const AlertEventRecord& e) {
  if (!e.resolved) {
    std::string where = e.gpu ? fmt::format(", GPU {}", *e.gpu) : "";
    return fmt::format("trainvitals: ALERT {} ({}{}): {}", Name(e.alert), SeverityName(e.severity),
                       where, e.summary);
  }
  std::string line = fmt::format("trainvitals: resolved {} after {}", Who(e.alert, e.gpu),
                                 FormatDuration(e.firing_s));
  if (!e.summary.empty()) line += ": " + e.summary;
  return line;
}

std::string LostLine(const AlertNoticesLostRecord& e) {
  std::string each;
  for (const AlertNoticesLostRecord::Action& a : e.actions) {
    std::string why;
    for (auto [n, words] :
         {std::pair{a.failed, "failed"}, std::pair{a.queue_full, "gave way in a full queue"},
          std::pair{a.run_ended, "cut off by the end"}}) {
      if (n == 0) continue;
      why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n, words);
    }
    each += fmt::format("{}{} {}: {}", each.empty() ? "" : "; ", Name(a.alert),
                        ActionName(a.action), why);
  }
  return fmt::format("trainvitals: {} alert notice{} not delivered ({})", e.count,
                     e.count == 1 ? " was" : "s were", each);
}

// The line of `event` read as a Record; empty when it cannot be read.
template <typename Record>
std::string LineOf(const Event& event) {
  Record r;
  if (!AlertFromEvent(event, &r).ok()) return "";
  return FormatAlertLine(r);
}

}  // namespace

// The summary and an action's message may quote what a command or a server
// said: one line, control bytes made visible.
std::string FormatAlertLine(const AlertEventRecord& event) { return VisibleText(AlertLine(event)); }

std::string FormatAlertLine(const AlertActionFailedRecord& event) {
  return VisibleText(fmt::format("trainvitals: alert {}: its {} failed: {}", Name(event.alert),
                                 ActionName(event.action), event.message));
}

std::string FormatAlertLine(const AlertNoticesLostRecord& event) {
  return VisibleText(LostLine(event));
}

std::string FormatAlertLine(const Event& event) {
  switch (event.type) {
    case EventType::kAlertFiring:
    case EventType::kAlertResolved:
      return LineOf<AlertEventRecord>(event);
    case EventType::kAlertActionFailed:
      return LineOf<AlertActionFailedRecord>(event);
    case EventType::kAlertNoticesLost:
      return LineOf<AlertNoticesLostRecord>(event);
    default:
      return "";
  }
}

std::string FormatAlerts(const std::vector<AlertRecord>& alerts) {
  std::string out;
  for (const AlertRecord& a : alerts) {
    int64_t times = a.times_fired;
    out += VisibleText(fmt::format(
        "  Alerts   {} ({}): fired {}, {} in all: {}", Who(a.alert, a.gpu),
        SeverityName(a.severity), times == 1 ? std::string("once") : fmt::format("{} times", times),
        FormatDuration(a.firing_s), a.summary));
    out += '\n';
  }
  return out;
}

}  // namespace tv

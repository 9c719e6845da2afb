#include "views/alert_lines.h"

#include <fmt/format.h>

#include "core/escape.h"
#include "core/format.h"

namespace tv {
namespace {

std::string Who(const nlohmann::ordered_json& f) {
  std::string name = f.value("alert", std::string("?"));
  if (f.contains("gpu") && f["gpu"].is_number_integer()) {
    return fmt::format("{} (GPU {})", name, f["gpu"].get<int>());
  }
  return name;
}

}  // namespace

namespace {

std::string AlertLine(std::string_view type, const nlohmann::ordered_json& f) {
  if (type == "alert_firing") {
    std::string where = f.contains("gpu") && f["gpu"].is_number_integer()
                            ? fmt::format(", GPU {}", f["gpu"].get<int>())
                            : "";
    return fmt::format("trainvitals: ALERT {} ({}{}): {}", f.value("alert", std::string("?")),
                       f.value("severity", std::string("warning")), where,
                       f.value("summary", std::string()));
  }
  if (type == "alert_resolved") {
    std::string line = fmt::format("trainvitals: resolved {} after {}", Who(f),
                                   FormatDuration(f.value("firing_s", 0.0)));
    if (std::string now = f.value("summary", std::string()); !now.empty()) line += ": " + now;
    return line;
  }
  if (type == "alert_notices_lost") {
    std::string each;
    const auto& actions = f.contains("actions") ? f["actions"] : nlohmann::ordered_json();
    for (const auto& a : actions) {
      std::string why;
      for (const char* key : {"failed", "queue_full", "run_ended"}) {
        int64_t n = a.value(key, int64_t{0});
        if (n == 0) continue;
        std::string_view words = std::string_view(key) == "failed" ? "failed"
                                 : std::string_view(key) == "queue_full"
                                     ? "gave way in a full queue"
                                     : "cut off by the end";
        why += fmt::format("{}{} {}", why.empty() ? "" : ", ", n, words);
      }
      each +=
          fmt::format("{}{} {}: {}", each.empty() ? "" : "; ", a.value("alert", std::string("?")),
                      a.value("action", std::string("action")), why);
    }
    int64_t count = f.value("count", int64_t{0});
    return fmt::format("trainvitals: {} alert notice{} not delivered ({})", count,
                       count == 1 ? " was" : "s were", each);
  }
  return fmt::format("trainvitals: alert {}: its {} failed: {}", f.value("alert", std::string("?")),
                     f.value("action", std::string("action")), f.value("message", std::string()));
}

}  // namespace

// The summary and an action's message may quote what a command or a server
// said: one line, control bytes made visible.
std::string FormatAlertLine(std::string_view type, const nlohmann::ordered_json& f) {
  return VisibleText(AlertLine(type, f));
}

std::string FormatAlerts(const nlohmann::ordered_json& alerts) {
  if (!alerts.is_array()) return "";
  std::string out;
  for (const auto& a : alerts) {
    int times = a.value("times_fired", 0);
    out += VisibleText(
        fmt::format("  Alerts   {} ({}): fired {}, {} in all: {}", Who(a),
                    a.value("severity", std::string("warning")),
                    times == 1 ? std::string("once") : fmt::format("{} times", times),
                    FormatDuration(a.value("firing_s", 0.0)), a.value("summary", std::string())));
    out += '\n';
  }
  return out;
}

}  // namespace tv

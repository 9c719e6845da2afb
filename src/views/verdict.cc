#include "views/verdict.h"

#include <fmt/format.h>

#include <cmath>

#include "core/format.h"
#include "core/time_spent.h"

namespace tv {
namespace {

std::string Text(const nlohmann::ordered_json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A memory trend's subject (summary.json "memory_trends"), which has a
// finding's shape: "GPU 1", "rank 2", "pid 412", or empty for the whole job.
std::string SubjectText(const nlohmann::ordered_json& subject) {
  FindingSubject s;
  return SubjectFromJson(subject, &s).ok() ? SubjectWords(s) : std::string();
}

std::string FirstAdvice(const FindingRecord& f) {
  return f.advice.empty() ? std::string() : f.advice.front();
}

// "productive steps 6%, start-up 5%, waiting for input 89%": the categories
// with time, in their order, in whole percents that add up to 100.
std::string TimeSpentText(const nlohmann::json& goodput) {
  std::string out;
  auto percent = goodput.find("percent");
  if (percent == goodput.end() || !percent->is_object()) return out;
  for (size_t i = 0; i < kSpentCount; ++i) {
    auto spent = static_cast<Spent>(i);
    auto value = percent->find(std::string(SpentName(spent)));
    if (value == percent->end() || !value->is_number() || value->get<double>() <= 0) continue;
    out += fmt::format("{}{} {:.0f}%", out.empty() ? "" : ", ", SpentWords(spent),
                       value->get<double>());
  }
  return out;
}

}  // namespace

std::string TimeSpentWords(const nlohmann::json& health) {
  if (!health.is_object()) return {};
  auto goodput = health.find("goodput");
  if (goodput == health.end() || !goodput->is_object()) return {};
  // Without step markers only GPUs held idle are known: said when there were some.
  bool measured = goodput->contains("productive_ratio");
  const auto& percent = goodput->value("percent", nlohmann::json::object());
  if (!measured && percent.value("idle_gpu", 0) == 0) return {};
  return TimeSpentText(*goodput);
}

std::string FormatTimeSpent(const nlohmann::ordered_json& health) {
  std::string text = TimeSpentWords(nlohmann::json(health));
  return text.empty() ? std::string() : "  Time     " + text + "\n";
}

std::string FormatNotJudged(const nlohmann::ordered_json& health) {
  if (!health.is_object()) return {};
  std::string out;
  for (const auto& r : health.value("not_judged", nlohmann::ordered_json::array())) {
    out += fmt::format("{}{} (needs {})", out.empty() ? "" : "; ", Text(r, "id"), Text(r, "needs"));
  }
  return out;
}

std::string FormatVerdict(const nlohmann::ordered_json& health,
                          const nlohmann::ordered_json& findings) {
  std::string out = FormatTimeSpent(health);
  if (health.is_object() && health.contains("note") && health["note"].is_string()) {
    out += fmt::format("  Health   {}\n", health["note"].get<std::string>());
  }
  if (health.is_object() && health.contains("score") && health["score"].is_number()) {
    out += fmt::format("  Health   {:.0f}/100", health["score"].get<double>());
    std::string sep = " (";
    for (const auto& item : health.value("breakdown", nlohmann::ordered_json::array())) {
      if (item.value("points", 0) == 0) continue;
      out += fmt::format("{}{:+d} {}", sep, item.value("points", 0), Text(item, "what"));
      sep = "; ";
    }
    if (sep != " (") out += ")";
    out += "\n";
    std::string epochs;
    for (const auto& e : health.value("epochs", nlohmann::ordered_json::array())) {
      epochs += fmt::format("{}{}: {:.0f}", epochs.empty() ? "" : ", ", e.value("epoch", 0),
                            e.value("score", 0.0));
    }
    if (!epochs.empty()) out += "           per epoch " + epochs + "\n";
    if (std::string waiting = FormatNotJudged(health); !waiting.empty()) {
      out += "           not judged yet: " + waiting + "\n";
    }
  }
  if (!findings.is_array() || findings.empty()) {
    if (health.is_object() && health.contains("score")) out += "  Findings none\n";
    return out;
  }
  out += fmt::format("  Findings {}\n", findings.size());
  for (const auto& j : findings) {
    FindingRecord f;
    if (Status read = FindingFromJson(j, &f); !read.ok()) {
      out += fmt::format("    (not readable: {})\n", read.message());
      continue;
    }
    std::string subject = SubjectWords(f.subject);
    out += fmt::format("    {} [{}]{}{}: {}\n", f.id, SeverityName(f.severity),
                       subject.empty() ? "" : " ", subject, f.message);
    if (std::string advice = FirstAdvice(f); !advice.empty()) {
      out += fmt::format("      → {}\n", advice);
    }
  }
  return out;
}

std::string FormatMemoryTrends(const nlohmann::ordered_json& trends) {
  if (!trends.is_array() || trends.empty()) return {};
  std::string out, flat, unsure;
  for (const auto& t : trends) {
    std::string subject = SubjectText(t.value("subject", nlohmann::ordered_json()));
    std::string figure = Text(t, "figure");
    std::string what = subject.empty() ? "job memory" : subject + " memory";
    if (figure.find("allocated") != std::string::npos) what = subject + " allocated";
    if (figure.find("reserved") != std::string::npos) what = subject + " reserved";
    std::string verdict = Text(t, "verdict");
    if (verdict == "leak") {
      out += fmt::format("  Growth   {} +{}/h", what,
                         FormatBytes(t.value("growth_bytes_per_hour", 0.0)));
      if (t.contains("growth_bytes_per_epoch")) {
        out += fmt::format(" (+{}/epoch)", FormatBytes(t.value("growth_bytes_per_epoch", 0.0)));
      }
      out += fmt::format(": a leak, confidence {:.1f}%\n", t.value("confidence", 0.0) * 100);
    } else {
      std::string& list = verdict == "no leak" ? flat : unsure;
      list += (list.empty() ? "" : ", ") + what;
    }
  }
  if (!flat.empty()) out += fmt::format("  Growth   no leak: {}\n", flat);
  if (!unsure.empty()) out += fmt::format("  Growth   not enough evidence yet: {}\n", unsure);
  return out;
}

std::string FormatFindingLine(const FindingRecord& f) {
  std::string subject = SubjectWords(f.subject);
  std::string line = fmt::format("trainvitals: {} ({}{}{}): {}", f.id, SeverityName(f.severity),
                                 subject.empty() ? "" : ", ", subject, f.message);
  if (std::string advice = FirstAdvice(f); !advice.empty()) line += " → " + advice;
  return line;
}

}  // namespace tv

#include "views/verdict.h"

#include <fmt/format.h>

#include <cmath>

#include "core/format.h"
#include "core/time_spent.h"

namespace tv {
namespace {

std::string FirstAdvice(const FindingRecord& f) {
  return f.advice.empty() ? std::string() : f.advice.front();
}

}  // namespace

std::string TimeSpentWords(const HealthRecord& health) {
  if (!health.goodput) return {};
  const GoodputRecord& g = *health.goodput;
  // Without step markers only GPUs held idle are known: said when there were some.
  if (!g.productive_ratio && g.Percent(Spent::kIdleGpu) == 0) return {};
  // The categories with time, in their order, in whole percents that add up to 100.
  std::string out;
  for (size_t i = 0; i < kSpentCount; ++i) {
    auto spent = static_cast<Spent>(i);
    if (g.Percent(spent) <= 0) continue;
    out += fmt::format("{}{} {}%", out.empty() ? "" : ", ", SpentWords(spent), g.Percent(spent));
  }
  return out;
}

std::string FormatTimeSpent(const HealthRecord& health) {
  std::string text = TimeSpentWords(health);
  return text.empty() ? std::string() : "  Time     " + text + "\n";
}

std::string FormatNotJudged(const HealthRecord& health) {
  std::string out;
  for (const HealthRecord::Waiting& w : health.not_judged) {
    out += fmt::format("{}{} (needs {})", out.empty() ? "" : "; ", w.id, w.needs);
  }
  return out;
}

std::string FormatVerdict(const HealthRecord& health, const std::vector<FindingRecord>& findings,
                          const Status& unread) {
  std::string out = FormatTimeSpent(health);
  if (!health.note.empty()) out += fmt::format("  Health   {}\n", health.note);
  if (health.score) {
    out += fmt::format("  Health   {:.0f}/100", *health.score);
    std::string sep = " (";
    for (const HealthRecord::Deduction& d : health.breakdown) {
      if (d.points == 0) continue;
      out += fmt::format("{}{:+d} {}", sep, d.points, d.what);
      sep = "; ";
    }
    if (sep != " (") out += ")";
    out += "\n";
    std::string epochs;
    for (const HealthRecord::Epoch& e : health.epochs) {
      epochs += fmt::format("{}{}: {:.0f}", epochs.empty() ? "" : ", ", e.epoch, e.score);
    }
    if (!epochs.empty()) out += "           per epoch " + epochs + "\n";
    if (std::string waiting = FormatNotJudged(health); !waiting.empty()) {
      out += "           not judged yet: " + waiting + "\n";
    }
  }
  if (findings.empty() && unread.ok()) {
    if (health.score) out += "  Findings none\n";
    return out;
  }
  out += fmt::format("  Findings {}\n", findings.size());
  for (const FindingRecord& f : findings) {
    std::string subject = SubjectWords(f.subject);
    out += fmt::format("    {} [{}]{}{}: {}\n", f.id, SeverityName(f.severity),
                       subject.empty() ? "" : " ", subject, f.message);
    if (std::string advice = FirstAdvice(f); !advice.empty()) {
      out += fmt::format("      → {}\n", advice);
    }
  }
  if (!unread.ok()) out += fmt::format("    (not readable: {})\n", unread.message());
  return out;
}

std::string FormatMemoryTrends(const std::vector<MemoryTrendRecord>& trends) {
  std::string out, flat, unsure;
  for (const MemoryTrendRecord& t : trends) {
    std::string subject = SubjectWords(t.subject);
    std::string what = subject.empty() ? "job memory" : subject + " memory";
    if (t.figure.find("allocated") != std::string::npos) what = subject + " allocated";
    if (t.figure.find("reserved") != std::string::npos) what = subject + " reserved";
    if (t.verdict == "leak") {
      out += fmt::format("  Growth   {} +{}/h", what,
                         FormatBytes(t.growth_bytes_per_hour.value_or(0)));
      if (t.growth_bytes_per_epoch) {
        out += fmt::format(" (+{}/epoch)", FormatBytes(*t.growth_bytes_per_epoch));
      }
      out += fmt::format(": a leak, confidence {:.1f}%\n", t.confidence.value_or(0) * 100);
    } else {
      std::string& list = t.verdict == "no leak" ? flat : unsure;
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

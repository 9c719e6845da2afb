#include "analysis/alerts/notice.h"

#include <fmt/format.h>

#include "store/alert_record.h"

namespace tv {

std::string_view StateName(AlertNotice::State state) {
  switch (state) {
    case AlertNotice::State::kFiring:
      return "firing";
    case AlertNotice::State::kRepeat:
      return "repeat";
    case AlertNotice::State::kResolved:
      return "resolved";
  }
  return "firing";
}

namespace {

// The one line a chat shows: "[FIRING] gpu-low-util (GPU 0) on host/run: summary".
std::string NoticeText(const AlertNotice& notice, const AlertContext& context) {
  std::string_view tag = "FIRING";
  if (notice.state == AlertNotice::State::kRepeat) tag = "STILL FIRING";
  if (notice.state == AlertNotice::State::kResolved) tag = "RESOLVED";
  std::string text = fmt::format("[{}] {}", tag, notice.rule->name);
  if (notice.gpu >= 0) text += fmt::format(" (GPU {})", notice.gpu);
  if (!context.host.empty() || !context.run.empty()) {
    text += " on ";
    text += context.host;
    if (!context.host.empty() && !context.run.empty()) text += '/';
    text += context.run;
  }
  text += ": ";
  text += notice.summary.empty() ? notice.rule->expr.text : notice.summary;
  return text;
}

}  // namespace

nlohmann::ordered_json NoticeJson(const AlertNotice& notice, const AlertContext& context) {
  const AlertRule& rule = *notice.rule;
  nlohmann::ordered_json j;
  j["name"] = rule.name;
  j["state"] = StateName(notice.state);
  j["severity"] = rule.severity;
  j["gpu"] = notice.gpu >= 0 ? nlohmann::ordered_json(notice.gpu) : nlohmann::ordered_json();
  j["value"] = notice.value ? nlohmann::ordered_json(*notice.value) : nlohmann::ordered_json();
  j["threshold"] = rule.expr.finding.empty() ? nlohmann::ordered_json(rule.expr.threshold)
                                             : nlohmann::ordered_json();
  j["expr"] = rule.expr.text;
  j["summary"] = notice.summary;
  nlohmann::ordered_json labels = nlohmann::ordered_json::object();
  for (const auto& [key, value] : rule.labels) labels[key] = value;
  j["labels"] = std::move(labels);
  j["starts_at"] = notice.starts_at;
  j["ends_at"] = notice.state == AlertNotice::State::kResolved ? nlohmann::ordered_json(notice.t)
                                                               : nlohmann::ordered_json();
  j["resolved_by"] =
      notice.state != AlertNotice::State::kResolved
          ? nlohmann::ordered_json()
          : nlohmann::ordered_json(AlertResolvedByName(
                notice.run_ended ? AlertResolvedBy::kRunEnd : AlertResolvedBy::kCondition));
  j["run"] = context.run;
  j["host"] = context.host;
  j["text"] = NoticeText(notice, context);
  return j;
}

}  // namespace tv

#include "store/live_record.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>

#include "store/record_json.h"

namespace tv {
namespace {

using Json = nlohmann::json;

template <typename J>
std::string JsonText(const J& j) {
  return j.dump(-1, ' ', false, J::error_handler_t::replace);
}

}  // namespace

std::string LiveHeadText(const LiveIdentity& identity) {
  nlohmann::ordered_json head = {
      {"version", 1},
      {"pid", identity.pid},
      {"job_pid", identity.job_pid},
      {"mode", identity.mode},
      {"name", identity.name},
      {"command", identity.command},
      {"run_dir", identity.run_dir},
      {"start_t", identity.start_t},
      {"interval_s", identity.interval_s},
  };
  if (!identity.socket.empty()) head["socket"] = identity.socket;
  std::string text = JsonText(head);
  text.pop_back();  // the closing brace: the live members follow
  return text;
}

void AppendLiveState(const Row& row, std::string* text) {
  auto out = std::back_inserter(*text);
  if (row.health_score && std::isfinite(*row.health_score)) {
    fmt::format_to(out, ",\"health_score\":{}", std::round(*row.health_score * 1e4) / 1e4);
  } else {
    text->append(",\"health_score\":null");
  }
  text->append(",\"findings\":[");
  bool first = true;
  for (const Row::Finding& f : row.findings) {
    if (!f.active) continue;
    // Ids and severities are the findings table's own words: nothing to escape.
    fmt::format_to(out, "{}{{\"id\":\"{}\",\"severity\":\"{}\"}}", first ? "" : ",", f.id,
                   f.severity);
    first = false;
  }
  text->append("],\"alerts\":[");
  first = true;
  for (const Row::Alert& a : row.alerts) {
    if (!a.firing) continue;
    fmt::format_to(out, "{}{{\"name\":{},\"severity\":\"{}\"", first ? "" : ",",
                   JsonText(Json(a.name)), a.severity);
    if (a.gpu >= 0) fmt::format_to(out, ",\"gpu\":{}", a.gpu);
    text->push_back('}');
    first = false;
  }
  text->append("],\"row\":");
}

Status LiveFromJson(const Json& j, LiveRecord* out) {
  *out = LiveRecord{};
  std::string error;
  RecordFields<Json> f(j, "", &error, RecordReading::kKeepGoing);
  if (!f.Object()) return Status::Invalid(error);
  auto pid = j.find("pid");
  if (pid == j.end() || !pid->is_number_integer()) {
    return Status::Invalid("key pid: expected a whole number");
  }
  LiveIdentity& id = out->identity;
  f.Whole("pid", &id.pid);
  f.Whole("job_pid", &id.job_pid);
  f.Text("mode", &id.mode);
  f.Text("name", &id.name);
  f.Texts("command", &id.command);
  f.Text("run_dir", &id.run_dir);
  f.Number("start_t", &id.start_t);
  f.Number("interval_s", &id.interval_s);
  f.Text("socket", &id.socket);
  f.Number("health_score", &out->health_score);
  f.Objects("findings", [&](RecordFields<Json>& e) {
    std::string id, severity;
    e.Text("id", &id);
    e.Text("severity", &severity);
    // One without an id or a known severity is not shown.
    if (std::optional<Severity> s = ParseSeverity(severity); s && !id.empty()) {
      out->findings.push_back({std::move(id), *s});
    }
  });
  f.Objects("alerts", [&](RecordFields<Json>& e) {
    LiveRecord::Alert& alert = out->alerts.emplace_back();
    e.Text("name", &alert.name);
    e.Text("severity", &alert.severity);
    e.Whole("gpu", &alert.gpu);
  });
  f.Member("row", [&](RecordFields<Json>& row) { row.Number("t", &out->row_t); });
  if (auto row = j.find("row"); row != j.end() && row->is_object()) {
    Status s = TotalsFromRow(*row, &out->row);
    if (!s.ok() && error.empty()) error = "row: " + s.message();
  }
  return ReadingStatus(error);
}

}  // namespace tv

#include "store/alert_record.h"

#include <fmt/format.h>

#include <limits>
#include <utility>

#include "core/json_read.h"
#include "store/record_json.h"

namespace tv {
namespace {

using OJson = nlohmann::ordered_json;

// The keys of the alert records: written here and read here only.
constexpr std::string_view kAlert = "alert";
constexpr std::string_view kExpr = "expr";
constexpr std::string_view kThreshold = "threshold";
constexpr std::string_view kTimesFired = "times_fired";
constexpr std::string_view kFirstFired = "first_fired_t";
constexpr std::string_view kLastResolved = "last_resolved_t";
constexpr std::string_view kFiring = "firing_s";
constexpr std::string_view kWorst = "worst_value";
constexpr std::string_view kSummary = "summary";
constexpr std::string_view kValue = "value";
constexpr std::string_view kStartsAt = "starts_at";
constexpr std::string_view kResolvedBy = "resolved_by";
constexpr std::string_view kAction = "action";
constexpr std::string_view kActions = "actions";
constexpr std::string_view kFailed = "failed";
constexpr std::string_view kQueueFull = "queue_full";
constexpr std::string_view kRunEnded = "run_ended";
// summary.json's key of the records.
constexpr std::string_view kAlerts = "alerts";

// ---- Writing ----

OJson LostJson(const AlertNoticesLostRecord::Action& a) {
  return {{kAlert, a.alert},   {kAction, a.action},        {kCount, a.count},
          {kFailed, a.failed}, {kQueueFull, a.queue_full}, {kRunEnded, a.run_ended}};
}

// ---- Reading ----

// An alert record is read strictly: the first value of the wrong type is the
// error, named by its path from the document.
template <typename Json>
using Fields = RecordFields<Json>;

template <typename Json>
void ReadSeverity(Fields<Json>& f, Severity* out) {
  f.Named(kSeverity, out, ParseSeverity, "info, warning or critical");
}

template <typename Json>
void ReadResolvedBy(Fields<Json>& f, AlertResolvedBy* out) {
  f.Named(
      kResolvedBy, out,
      [](std::string_view name) -> std::optional<AlertResolvedBy> {
        for (AlertResolvedBy by : {AlertResolvedBy::kCondition, AlertResolvedBy::kRunEnd}) {
          if (name == AlertResolvedByName(by)) return by;
        }
        return std::nullopt;
      },
      "condition or run_end");
}

template <typename Json>
Status ReadAlert(const Json& j, std::string at, AlertRecord* out) {
  std::string error;
  Fields<Json> f(j, std::move(at), &error);
  if (!f.Object()) return ReadingStatus(error);
  AlertRecord a;
  f.Text(kAlert, &a.alert);
  ReadSeverity(f, &a.severity);
  f.Whole(kGpu, &a.gpu);
  f.Text(kExpr, &a.expr);
  f.Number(kThreshold, &a.threshold);
  f.Whole(kTimesFired, &a.times_fired);
  f.Number(kFirstFired, &a.first_fired_t);
  f.Number(kLastResolved, &a.last_resolved_t);
  f.Number(kFiring, &a.firing_s);
  f.Number(kWorst, &a.worst_value);
  f.Text(kSummary, &a.summary);
  if (!error.empty()) return ReadingStatus(error);
  *out = std::move(a);
  return Status::Ok();
}

template <typename Json>
Status ReadAlerts(const Json& summary, std::vector<AlertRecord>* out) {
  out->clear();
  const Json* alerts = JsonAt(summary, kAlerts);
  if (alerts == nullptr || alerts->is_null()) return Status::Ok();
  if (!alerts->is_array()) {
    return Status::Invalid(
        fmt::format("key {}: expected an array, got {}", kAlerts, JsonKindName(*alerts)));
  }
  for (size_t i = 0; i < alerts->size(); ++i) {
    AlertRecord a;
    if (Status s = ReadAlert((*alerts)[i], fmt::format("{}[{}]", kAlerts, i), &a); !s.ok()) {
      return s;
    }
    out->push_back(std::move(a));
  }
  return Status::Ok();
}

Status TypeError(EventType got, std::initializer_list<EventType> want) {
  std::string names;
  for (EventType w : want) {
    if (w == got) return Status::Ok();
    names += fmt::format("{}{}", names.empty() ? "" : " or ", EventTypeName(w));
  }
  return Status::Invalid(fmt::format("key {}: expected {}", kEventType, names));
}

// The further keys of an event of type `type` at `t` read into `out`.
template <typename Json>
Status ReadEvent(const Json& j, EventType type, double t, AlertEventRecord* out) {
  Status s = TypeError(type, {EventType::kAlertFiring, EventType::kAlertResolved});
  if (!s.ok()) return s;
  std::string error;
  Fields<Json> f(j, "", &error);
  if (!f.Object()) return ReadingStatus(error);
  AlertEventRecord r;
  r.resolved = type == EventType::kAlertResolved;
  r.t = t;
  f.Text(kAlert, &r.alert);
  ReadSeverity(f, &r.severity);
  f.Whole(kGpu, &r.gpu);
  f.Number(kValue, &r.value);
  f.Number(kThreshold, &r.threshold);
  f.Text(kExpr, &r.expr);
  f.Text(kSummary, &r.summary);
  f.Number(kStartsAt, &r.starts_at);
  if (r.resolved) {
    f.Number(kFiring, &r.firing_s);
    ReadResolvedBy(f, &r.resolved_by);
  }
  if (!error.empty()) return ReadingStatus(error);
  *out = std::move(r);
  return Status::Ok();
}

template <typename Json>
Status ReadEvent(const Json& j, EventType type, double t, AlertActionRecord* out) {
  Status s = TypeError(type, {EventType::kAlertAction});
  if (!s.ok()) return s;
  std::string error;
  Fields<Json> f(j, "", &error);
  if (!f.Object()) return ReadingStatus(error);
  AlertActionRecord r;
  r.t = t;
  f.Text(kAlert, &r.alert);
  f.Text(kAction, &r.action);
  f.Text(kSignal, &r.signal);
  f.Whole(kPid, &r.pid);
  if (!error.empty()) return ReadingStatus(error);
  *out = std::move(r);
  return Status::Ok();
}

template <typename Json>
Status ReadEvent(const Json& j, EventType type, double t, AlertActionFailedRecord* out) {
  Status s = TypeError(type, {EventType::kAlertActionFailed});
  if (!s.ok()) return s;
  std::string error;
  Fields<Json> f(j, "", &error);
  if (!f.Object()) return ReadingStatus(error);
  AlertActionFailedRecord r;
  r.t = t;
  f.Text(kAlert, &r.alert);
  f.Text(kAction, &r.action);
  f.Text(kMessage, &r.message);
  if (!error.empty()) return ReadingStatus(error);
  *out = std::move(r);
  return Status::Ok();
}

template <typename Json>
Status ReadEvent(const Json& j, EventType type, double t, AlertNoticesLostRecord* out) {
  Status s = TypeError(type, {EventType::kAlertNoticesLost});
  if (!s.ok()) return s;
  std::string error;
  Fields<Json> f(j, "", &error);
  if (!f.Object()) return ReadingStatus(error);
  AlertNoticesLostRecord r;
  r.t = t;
  f.Whole(kCount, &r.count);
  f.Objects(kActions, [&](Fields<Json>& e) {
    AlertNoticesLostRecord::Action a;
    e.Text(kAlert, &a.alert);
    e.Text(kAction, &a.action);
    e.Whole(kCount, &a.count);
    e.Whole(kFailed, &a.failed);
    e.Whole(kQueueFull, &a.queue_full);
    e.Whole(kRunEnded, &a.run_ended);
    r.actions.push_back(std::move(a));
  });
  if (!error.empty()) return ReadingStatus(error);
  *out = std::move(r);
  return Status::Ok();
}

// A line of events.jsonl: its `t` and `type`, then its further keys.
template <typename Json, typename Record>
Status ReadLine(const Json& line, Record* out) {
  std::string error;
  Fields<Json> f(line, "", &error);
  if (!f.Object()) return ReadingStatus(error);
  double t = 0;
  std::string type;
  f.Number(kEventT, &t);
  f.Text(kEventType, &type);
  if (!error.empty()) return ReadingStatus(error);
  if (JsonAt(line, kEventT) == nullptr) {
    return Status::Invalid(fmt::format("key {}: missing, expected a number", kEventT));
  }
  // A type this version does not know is refused as one of another type.
  return ReadEvent(line, ParseEventType(type).value_or(EventType::kStart), t, out);
}

}  // namespace

std::string_view AlertResolvedByName(AlertResolvedBy by) {
  return by == AlertResolvedBy::kRunEnd ? "run_end" : "condition";
}

OJson AlertJson(const AlertRecord& a) {
  OJson j = {{kAlert, a.alert}, {kSeverity, SeverityName(a.severity)}};
  Put(j, kGpu, a.gpu);
  j[kExpr] = a.expr;
  Put(j, kThreshold, a.threshold);
  j[kTimesFired] = a.times_fired;
  j[kFirstFired] = a.first_fired_t;
  Put(j, kLastResolved, a.last_resolved_t);
  j[kFiring] = a.firing_s;
  Put(j, kWorst, a.worst_value);
  j[kSummary] = a.summary;
  return j;
}

OJson AlertsJson(const std::vector<AlertRecord>& alerts) {
  OJson out = OJson::array();
  for (const AlertRecord& a : alerts) out.push_back(AlertJson(a));
  return out;
}

void SetSummaryAlerts(const std::vector<AlertRecord>& alerts, OJson* summary) {
  (*summary)[kAlerts] = AlertsJson(alerts);
}

Status AlertFromJson(const nlohmann::json& j, AlertRecord* out) { return ReadAlert(j, "", out); }
Status AlertFromJson(const OJson& j, AlertRecord* out) { return ReadAlert(j, "", out); }

Status AlertsFromSummary(const nlohmann::json& summary, std::vector<AlertRecord>* out) {
  return ReadAlerts(summary, out);
}
Status AlertsFromSummary(const OJson& summary, std::vector<AlertRecord>* out) {
  return ReadAlerts(summary, out);
}

Event AlertEvent(const AlertEventRecord& r) {
  Event e;
  e.t = r.t;
  e.type = r.resolved ? EventType::kAlertResolved : EventType::kAlertFiring;
  OJson& j = e.fields;
  j[kAlert] = r.alert;
  j[kSeverity] = SeverityName(r.severity);
  Put(j, kGpu, r.gpu);
  Put(j, kValue, r.value);
  Put(j, kThreshold, r.threshold);
  j[kExpr] = r.expr;
  j[kSummary] = r.summary;
  j[kStartsAt] = r.starts_at;
  if (r.resolved) {
    j[kFiring] = r.firing_s;
    j[kResolvedBy] = AlertResolvedByName(r.resolved_by);
  }
  return e;
}

Event AlertEvent(const AlertActionRecord& r) {
  Event e;
  e.t = r.t;
  e.type = EventType::kAlertAction;
  e.fields = {{kAlert, r.alert}, {kAction, r.action}};
  if (!r.signal.empty()) e.fields[kSignal] = r.signal;
  Put(e.fields, kPid, r.pid);
  return e;
}

Event AlertEvent(const AlertActionFailedRecord& r) {
  Event e;
  e.t = r.t;
  e.type = EventType::kAlertActionFailed;
  e.fields = {{kAlert, r.alert}, {kAction, r.action}, {kMessage, r.message}};
  return e;
}

Event AlertEvent(const AlertNoticesLostRecord& r) {
  Event e;
  e.t = r.t;
  e.type = EventType::kAlertNoticesLost;
  OJson actions = OJson::array();
  for (const AlertNoticesLostRecord::Action& a : r.actions) actions.push_back(LostJson(a));
  e.fields = {{kCount, r.count}, {kActions, std::move(actions)}};
  return e;
}

Status AlertFromEvent(const Event& e, AlertEventRecord* out) {
  return ReadEvent(e.fields, e.type, e.t, out);
}
Status AlertFromEvent(const Event& e, AlertActionRecord* out) {
  return ReadEvent(e.fields, e.type, e.t, out);
}
Status AlertFromEvent(const Event& e, AlertActionFailedRecord* out) {
  return ReadEvent(e.fields, e.type, e.t, out);
}
Status AlertFromEvent(const Event& e, AlertNoticesLostRecord* out) {
  return ReadEvent(e.fields, e.type, e.t, out);
}

Status AlertFromEventLine(const nlohmann::json& line, AlertEventRecord* out) {
  return ReadLine(line, out);
}
Status AlertFromEventLine(const OJson& line, AlertEventRecord* out) { return ReadLine(line, out); }
Status AlertFromEventLine(const OJson& line, AlertActionRecord* out) { return ReadLine(line, out); }
Status AlertFromEventLine(const OJson& line, AlertActionFailedRecord* out) {
  return ReadLine(line, out);
}
Status AlertFromEventLine(const OJson& line, AlertNoticesLostRecord* out) {
  return ReadLine(line, out);
}

}  // namespace tv

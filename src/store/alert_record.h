// The alerts of a run, typed (docs/schema.md): AlertRecord is one element of
// summary.json's `alerts` (an alert instance that fired); AlertEventRecord an
// alert_firing or alert_resolved line of events.jsonl; AlertActionRecord an
// alert_action line, AlertActionFailedRecord an alert_action_failed line and
// AlertNoticesLostRecord the alert_notices_lost line. This file alone knows
// their keys: the alerts (analysis/alerts/) and their actions (actions/) fill
// the structs and write them through it; the stderr lines, the end summary and
// the report read them back through it.
//
// Writing puts the keys in the order trainvitals has always written them, an
// optional one only when set, each number in the form of its field (counts,
// GPU indices and pids as integers, times and values as doubles), so a record
// read and written back is byte for byte what the file held. The writer rounds
// (times to the millisecond, durations to the tenth of a second) before it
// fills a record: a record holds what is written.
//
// Reading takes a record as a file holds it: a key that is absent leaves its
// field at its default (an older run's event may lack its summary), keys it
// does not know are ignored (an event's `t` and `type` among them), and a key
// of another type is an Invalid Status naming it and what it should hold
// ("key gpu: expected a whole number, got 1.5", "key alerts[1].severity: expected
// info, warning or critical, got \"fatal\"").
//
// Thread-safe: plain data and pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "core/severity.h"
#include "core/status.h"

namespace tv {

// One alert instance (a rule, and its GPU for a per-GPU rule) that fired.
struct AlertRecord {
  std::string alert;  // the rule's name
  Severity severity = Severity::kWarning;
  std::optional<int> gpu;  // a per-GPU rule's GPU (its index as the job numbers it)
  std::string expr;
  std::optional<double> threshold;  // none for a finding rule
  int64_t times_fired = 0;
  double first_fired_t = 0;               // unix seconds
  std::optional<double> last_resolved_t;  // none: it never resolved
  double firing_s = 0;                    // all its firings together
  std::optional<double> worst_value;      // furthest past the threshold while it fired
  std::string summary;

  bool operator==(const AlertRecord&) const = default;
};

// How an alert_resolved came about: its condition cleared for its
// keep_firing_for ("condition"), or the run ended while it fired ("run_end").
enum class AlertResolvedBy { kCondition, kRunEnd };
std::string_view AlertResolvedByName(AlertResolvedBy by);

// alert_firing (`resolved` false) or alert_resolved.
struct AlertEventRecord {
  bool resolved = false;
  double t = 0;  // unix seconds of the change
  std::string alert;
  Severity severity = Severity::kWarning;
  std::optional<int> gpu;
  std::optional<double> value;      // the expression's value (none for a finding rule)
  std::optional<double> threshold;  // none for a finding rule
  std::string expr;
  // Firing: the rule's summary, filled in; resolved: what holds now.
  std::string summary;
  double starts_at = 0;  // when this firing began
  // alert_resolved only.
  double firing_s = 0;
  AlertResolvedBy resolved_by = AlertResolvedBy::kCondition;

  bool operator==(const AlertEventRecord&) const = default;
};

// alert_action: an action that acts on the job ran (the signal action: which
// signal it sent to which pid).
struct AlertActionRecord {
  double t = 0;
  std::string alert;
  std::string action;      // "signal"
  std::string signal;      // "SIGTERM"; written when not empty
  std::optional<int> pid;  // the job's root process

  bool operator==(const AlertActionRecord&) const = default;
};

// alert_action_failed: an alert's action failed (said once per rule and action).
struct AlertActionFailedRecord {
  double t = 0;
  std::string alert;
  std::string action;  // "command", "webhook", "alertmanager", "signal"
  std::string message;

  bool operator==(const AlertActionFailedRecord&) const = default;
};

// alert_notices_lost: the notices that never reached their action, by action.
struct AlertNoticesLostRecord {
  struct Action {
    std::string alert;
    std::string action;
    int64_t count = 0;  // failed + queue_full + run_ended
    int64_t failed = 0;
    int64_t queue_full = 0;
    int64_t run_ended = 0;

    bool operator==(const Action&) const = default;
  };
  double t = 0;
  int64_t count = 0;  // over every action
  std::vector<Action> actions;

  bool operator==(const AlertNoticesLostRecord&) const = default;
};

// ---- summary.json ----

// One element of summary.json's "alerts": alert, severity, gpu (when set),
// expr, threshold (when set), times_fired, first_fired_t, last_resolved_t
// (when set), firing_s, worst_value (when set), summary.
nlohmann::ordered_json AlertJson(const AlertRecord& a);
// summary.json's "alerts": an array of them, in their order.
nlohmann::ordered_json AlertsJson(const std::vector<AlertRecord>& alerts);
// Sets summary.json's "alerts" of `summary` (an object) to AlertsJson.
void SetSummaryAlerts(const std::vector<AlertRecord>& alerts, nlohmann::ordered_json* summary);

// One element of "alerts". On error *out is unspecified.
Status AlertFromJson(const nlohmann::json& j, AlertRecord* out);
Status AlertFromJson(const nlohmann::ordered_json& j, AlertRecord* out);
// A summary's "alerts" (none when the key is absent or null); an error names
// the element ("key alerts[1].times_fired: ...") and leaves `out` with those
// before it.
Status AlertsFromSummary(const nlohmann::json& summary, std::vector<AlertRecord>* out);
Status AlertsFromSummary(const nlohmann::ordered_json& summary, std::vector<AlertRecord>* out);

// ---- events.jsonl ----

// The record as an event: its t, its type and its further keys, in the order
// docs/schema.md lists them (an alert_resolved adds firing_s and resolved_by
// to the keys of an alert_firing).
Event AlertEvent(const AlertEventRecord& r);
Event AlertEvent(const AlertActionRecord& r);
Event AlertEvent(const AlertActionFailedRecord& r);
Event AlertEvent(const AlertNoticesLostRecord& r);

// An event of the record's type read back; "key type: expected alert_firing
// or alert_resolved" (and so on) for an event of another type.
Status AlertFromEvent(const Event& e, AlertEventRecord* out);
Status AlertFromEvent(const Event& e, AlertActionRecord* out);
Status AlertFromEvent(const Event& e, AlertActionFailedRecord* out);
Status AlertFromEvent(const Event& e, AlertNoticesLostRecord* out);

// A line of events.jsonl (`t`, `type` and the further keys) read back, as
// AlertFromEvent.
Status AlertFromEventLine(const nlohmann::json& line, AlertEventRecord* out);
Status AlertFromEventLine(const nlohmann::ordered_json& line, AlertEventRecord* out);
Status AlertFromEventLine(const nlohmann::ordered_json& line, AlertActionRecord* out);
Status AlertFromEventLine(const nlohmann::ordered_json& line, AlertActionFailedRecord* out);
Status AlertFromEventLine(const nlohmann::ordered_json& line, AlertNoticesLostRecord* out);

}  // namespace tv

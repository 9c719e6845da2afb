// Alert rules (docs/alerts.md): a condition over any metric of the schema or
// a finding, held for a while, with actions. Written as [[alert]] tables in
// the config file or an --alerts file; a few built-in rules that users can
// tune or turn off. Plain data, shared read-only by the evaluator (sampler
// thread) and the actions (their own thread) for the whole run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/metrics.h"
#include "core/severity.h"

namespace tv {

enum class Aggregate { kLast, kMean, kMax, kMin };
enum class Compare { kLess, kLessEqual, kGreater, kGreaterEqual, kEqual, kNotEqual };

// One metric of a row: a host/job/training metric, or a per-GPU one
// ("gpus[].util_ratio"); `row_max`: the row's "<name>_max" (the interval's
// peak) instead of its value.
struct MetricRef {
  MetricId id;
  bool row_max = false;
  std::string text;  // as written: "gpus[].memory_used_bytes_max"
};

// `a or b or ...`: the first of them the row has (PromQL's `or`).
struct Operand {
  std::vector<MetricRef> alternatives;
};

// AGG(NUMERATOR [/ DENOMINATOR] [WINDOW]) COMPARE THRESHOLD, or a finding.
struct AlertExpr {
  std::string text;     // as written, for messages; for a finding rule "finding <id>"
  std::string finding;  // a finding rule: true while a finding of this id is open
  Operand numerator;
  std::optional<Operand> denominator;
  Aggregate aggregate = Aggregate::kLast;
  double window_s = 0;  // "[10m]"; 0 with window_rows 0: the row alone
  int window_rows = 0;  // "[5 samples]": the last N rows
  Compare compare = Compare::kGreater;
  double threshold = 0;     // in base units ("20%" is 0.2, "4GiB" is 4 * 2^30)
  bool per_gpu = false;     // an operand is a gpus[] metric: one instance per GPU
  Unit unit = Unit::kNone;  // the value's unit (kRatio for a ratio of like units), for messages
};

// What a rule does besides logging (always on: an alert_firing / alert_resolved
// event and one stderr line).
struct AlertActionsSpec {
  std::vector<std::string> command;  // argv, never through a shell; empty: none
  double command_timeout_s = 30;
  std::string webhook;       // URL to POST the alert's JSON to (Slack-compatible "text")
  std::string alertmanager;  // base URL of an Alertmanager (POST to /api/v2/alerts)
  int signal = 0;            // SIGINT or SIGTERM to the job when it fires; 0: none (opt-in)
  bool stop = false;         // ask the training to stop through the callbacks (opt-in)
};

// Whether a rule does more than log, so that its notices go to AlertActions.
inline bool HasDeliveries(const AlertActionsSpec& a) {
  return !a.command.empty() || !a.webhook.empty() || !a.alertmanager.empty() || a.signal != 0;
}

struct AlertRule {
  std::string name;  // [A-Za-z0-9_.-]+, unique; the Alertmanager alertname
  AlertExpr expr;
  double for_s = 0;                  // true this long before it fires (pending until then)
  double keep_firing_for_s = 0;      // fires on this long after the condition cleared
  double repeat_s = 4 * 3600;        // notify again while it keeps firing; 0: never
  std::string severity = "warning";  // "info", "warning", "critical"
  std::vector<std::pair<std::string, std::string>> labels;  // extra labels, in order
  // One line in the user's terms; {gpu}, {value}, {threshold}, {name} are
  // filled in. Empty: made from the expression.
  std::string summary;
  // Per-GPU rules: every watched GPU, not only those the job uses.
  bool all_gpus = false;
  AlertActionsSpec actions;
  bool builtin = false;
  std::string where;  // "FILE:LINE" of its table, or "built-in"
};

// The rule's severity as its records hold it (a rule's file accepts only
// info, warning and critical).
inline Severity AlertSeverity(const AlertRule& rule) {
  return ParseSeverity(rule.severity).value_or(Severity::kWarning);
}

}  // namespace tv

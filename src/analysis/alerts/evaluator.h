// AlertEvaluator: the alert rules' semantics, as Prometheus has them, over
// rows. Each rule (and each GPU, for a per-GPU rule) is an instance: its
// expression is evaluated on every row (an aggregate over the window's rows);
// true for `for` seconds it fires; once false for `keep_firing_for` seconds it
// resolves; while it fires it is notified again every `repeat` seconds. A
// missing value is false. Per-GPU rules cover the GPUs the job uses (holds
// memory or runs processes on, once seen), or every watched GPU with
// all_gpus; when the driver lists no processes, every watched GPU.
//
// Thread safety: none; one thread (the sampler's).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "analysis/alerts/notice.h"
#include "analysis/alerts/rule.h"
#include "core/row.h"
#include "store/alert_record.h"

namespace tv {

struct AlertChange {
  const AlertRule* rule = nullptr;
  int gpu = -1;
  AlertNotice::State state = AlertNotice::State::kFiring;
  double t = 0;
  double starts_at = 0;
  std::optional<double> value;
  bool run_ended = false;  // resolved: by the run's end, not by its condition clearing
  bool held = false;       // the condition held on the last row evaluated
};

class AlertEvaluator {
 public:
  AlertEvaluator(std::shared_ptr<const std::vector<AlertRule>> rules, double interval_s);
  ~AlertEvaluator();
  AlertEvaluator(AlertEvaluator&&) noexcept;

  // Evaluates every rule on `row` (its findings set); appends the changes.
  void OnRow(const Row& row, std::vector<AlertChange>* changes);
  // The run ended at `t`: every firing instance resolves.
  void Finish(double t, std::vector<AlertChange>* changes);
  // Each instance that has fired so far, and whether it fires now.
  void States(std::vector<Row::Alert>* out) const;
  // summary.json "alerts": one record per instance that fired (how often,
  // when first, how long in all, its worst value), rounded as written.
  std::vector<AlertRecord> Summary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A value of `rule`'s expression in words: "12%", "3.1 GiB", "86 °C".
std::string AlertValueText(const AlertRule& rule, double value);
// The rule's summary with {gpu}, {value}, {threshold} and {name} filled in
// (made from the expression when the rule has none).
std::string AlertSummaryText(const AlertRule& rule, int gpu, std::optional<double> value);
// What the rule's expression is about, in words: "job memory", "GPU 0 util",
// "GPU 0 throttle thermal (mean over 5 min)".
std::string AlertSubjectText(const AlertRule& rule, int gpu);
// A resolved alert in words, with its value now: "job memory 524 MiB, back
// under 600 MiB"; when the run's end resolved it, what it was then: "the run
// ended (job memory was 700 MiB over 600 MiB)". `held`: the condition held
// on the last row (a finding rule: its finding was open).
std::string AlertResolvedText(const AlertRule& rule, int gpu, std::optional<double> value,
                              bool run_ended, bool held);

}  // namespace tv

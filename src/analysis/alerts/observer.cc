#include "analysis/alerts/observer.h"

#include <cmath>

namespace tv {

AlertsObserver::AlertsObserver(std::shared_ptr<const std::vector<AlertRule>> rules,
                               double interval_s)
    : rules_(rules), evaluator_(std::move(rules), interval_s) {}

void AlertsObserver::OnSample(const Sample& sample, std::vector<Event>* events) {
  (void)sample;
  (void)events;
}

void AlertsObserver::OnRow(Row* row, std::vector<Event>* events) {
  changes_.clear();
  evaluator_.OnRow(*row, &changes_);
  for (const AlertChange& c : changes_) Emit(c, events);
  evaluator_.States(&row->alerts);
}

void AlertsObserver::OnFinish(double t, std::vector<Event>* events) {
  changes_.clear();
  evaluator_.Finish(t, &changes_);
  for (const AlertChange& c : changes_) Emit(c, events);
}

void AlertsObserver::Emit(const AlertChange& c, std::vector<Event>* events) {
  const AlertRule& r = *c.rule;
  AlertNotice notice;
  notice.state = c.state;
  notice.rule = &r;
  notice.gpu = c.gpu;
  notice.t = c.t;
  notice.starts_at = c.starts_at;
  notice.value = c.value;
  notice.run_ended = c.run_ended;
  notice.summary = c.state == AlertNotice::State::kResolved
                       ? AlertResolvedText(r, c.gpu, c.value, c.run_ended, c.held)
                       : AlertSummaryText(r, c.gpu, c.value);
  if (c.state != AlertNotice::State::kRepeat) {
    AlertEventRecord e;
    e.resolved = c.state == AlertNotice::State::kResolved;
    e.t = c.t;
    e.alert = r.name;
    e.severity = AlertSeverity(r);
    if (c.gpu >= 0) e.gpu = c.gpu;
    if (c.value) e.value = RoundAsWritten(*c.value, false);
    if (r.expr.finding.empty()) e.threshold = r.expr.threshold;
    e.expr = r.expr.text;
    e.summary = notice.summary;
    e.starts_at = std::round(c.starts_at * 1000) / 1000;
    if (e.resolved) {
      e.firing_s = std::round((c.t - c.starts_at) * 10) / 10;
      e.resolved_by = c.run_ended ? AlertResolvedBy::kRunEnd : AlertResolvedBy::kCondition;
    }
    events->push_back(AlertEvent(e));
  }
  if (c.state == AlertNotice::State::kFiring && r.actions.stop && stop_) stop_(r);
  // The signal acts only as an alert begins firing; AlertActions skips the others.
  if (notify_ && HasDeliveries(r.actions)) notify_(std::move(notice));
}

}  // namespace tv

#include "analysis/findings/rule.h"

namespace tv {

bool RuleContext::Due(Tracker& tr, double t, bool cond, double open_after_s) {
  if (cond) {
    tr.clear_since.reset();
    if (!tr.true_since) tr.true_since = t;
    return !tr.open() && t - *tr.true_since >= open_after_s;
  }
  tr.true_since.reset();
  if (!tr.open()) return false;
  if (!tr.clear_since) tr.clear_since = t;
  if (t - *tr.clear_since >= th[Th::kHold_s]) Close(tr, t);
  return false;
}

void RuleContext::Open(FindingId id, Tracker& tr, double t, const nlohmann::ordered_json& subject,
                       Opening opening) {
  tr.record = log_.Open(id, t, run.framework, subject, std::move(opening), events_);
}

void RuleContext::Close(Tracker& tr, double t) {
  log_.Close(tr.record, t, events_);
  tr.record = -1;
  tr.clear_since.reset();
}

}  // namespace tv

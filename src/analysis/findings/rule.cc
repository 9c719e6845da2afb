#include "analysis/findings/rule.h"

namespace tv {

bool RuleContext::Due(Tracker& tr, double t, bool cond, double open_after_s) {
  Hysteresis::Edge edge = tr.Feed(t, cond, tr.open(), open_after_s, th[Th::kHold_s]);
  if (edge == Hysteresis::Edge::kFall) Close(tr, t);
  return edge == Hysteresis::Edge::kRise;
}

void RuleContext::Open(FindingId id, Tracker& tr, double t, const FindingSubject& subject,
                       Opening opening) {
  tr.record = log_.Open(id, t, run.framework, subject, std::move(opening), events_);
}

void RuleContext::Close(Tracker& tr, double t) {
  log_.Close(tr.record, t, events_);
  tr.record = -1;
  tr.clear_since.reset();
}

}  // namespace tv

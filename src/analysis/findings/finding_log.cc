#include "analysis/findings/finding_log.h"

#include <algorithm>
#include <cmath>

namespace tv {

int FindingLog::Open(FindingId id, double t, Framework framework, const FindingSubject& subject,
                     Opening o, std::vector<Event>* events) {
  const FindingDef& def = Def(id);
  int index = static_cast<int>(records_.size());
  std::string advice = o.advice.empty() ? std::string(AdviceFor(def, framework)) : o.advice;
  FindingRecord r{.id = std::string(def.name),
                  .severity = o.severity,
                  .opened_t = t,
                  .subject = subject,
                  .evidence = std::move(o.evidence),
                  .message = std::move(o.message),
                  .advice = {std::move(advice)}};
  events->push_back(
      Event{t, EventType::kFindingOpen, FindingEventFields(EventType::kFindingOpen, r)});
  opened_.emplace_back(id, r.subject);
  records_.push_back(LoggedFinding{id, std::move(r)});
  return index;
}

int FindingLog::LatestOpen(FindingId id) const {
  for (size_t i = records_.size(); i-- > 0;) {
    if (records_[i].id == id && !records_[i].record.closed_t) return static_cast<int>(i);
  }
  return -1;
}

void FindingLog::Amend(int index, const Evidence& evidence, std::string message,
                       std::string advice) {
  if (index < 0 || static_cast<size_t>(index) >= records_.size()) return;
  FindingRecord& r = records_[static_cast<size_t>(index)].record;
  for (const auto& [name, value] : evidence.entries()) r.evidence[name] = value;
  r.message = std::move(message);
  if (!advice.empty()) r.advice = {std::move(advice)};
}

void FindingLog::Close(int index, double t, std::vector<Event>* events) {
  FindingRecord& r = records_[static_cast<size_t>(index)].record;
  r.closed_t = t;
  r.duration_s = std::round((t - r.opened_t) * 1000) / 1000;
  events->push_back(
      Event{t, EventType::kFindingClose, FindingEventFields(EventType::kFindingClose, r)});
}

void FindingLog::States(std::vector<Row::Finding>* out) const {
  out->clear();
  std::vector<Severity> worst;
  for (const LoggedFinding& f : records_) {
    std::string_view id = Def(f.id).name;
    size_t i = 0;
    while (i < out->size() && (*out)[i].id != id) ++i;
    if (i == out->size()) {
      out->push_back(Row::Finding{id, {}, false});
      worst.push_back(f.record.severity);
    }
    worst[i] = std::max(worst[i], f.record.severity);
    (*out)[i].active = (*out)[i].active || !f.record.closed_t;
  }
  for (size_t i = 0; i < out->size(); ++i) (*out)[i].severity = SeverityName(worst[i]);
}

std::vector<FindingRecord> FindingLog::Sorted(double end) const {
  std::vector<const FindingRecord*> order;
  for (const LoggedFinding& f : records_) order.push_back(&f.record);
  auto lasted = [end](const FindingRecord* r) { return r->closed_t.value_or(end) - r->opened_t; };
  std::stable_sort(order.begin(), order.end(), [&](const FindingRecord* a, const FindingRecord* b) {
    if (a->severity != b->severity) return a->severity > b->severity;
    return lasted(a) > lasted(b);
  });
  std::vector<FindingRecord> out;
  out.reserve(order.size());
  for (const FindingRecord* r : order) {
    out.push_back(*r);
    out.back().duration_s = std::round(lasted(r) * 10) / 10;
  }
  return out;
}

void FindingLog::NotJudged(std::vector<std::string_view>* out) const {
  out->clear();
  for (size_t i = 0; i < kFindingCount; ++i) {
    if (judge_[i] == 1) out->push_back(Def(static_cast<FindingId>(i)).name);
  }
}

}  // namespace tv

#include "analysis/findings/finding_log.h"

#include <algorithm>
#include <cmath>

namespace tv {

int FindingLog::Open(FindingId id, double t, Framework framework,
                     const nlohmann::ordered_json& subject, Opening o, std::vector<Event>* events) {
  const FindingDef& def = Def(id);
  int index = static_cast<int>(records_.size());
  std::string advice = o.advice.empty() ? std::string(AdviceFor(def, framework)) : o.advice;
  records_.push_back(
      FindingRecord{id, o.severity, t, std::nullopt, subject, o.evidence, o.message, advice});
  events->push_back(Event{t,
                          EventType::kFindingOpen,
                          {{"id", def.name},
                           {"severity", SeverityName(o.severity)},
                           {"subject", subject},
                           {"evidence", std::move(o.evidence)},
                           {"message", std::move(o.message)},
                           {"advice", nlohmann::ordered_json::array({advice})}}});
  return index;
}

void FindingLog::Close(int index, double t, std::vector<Event>* events) {
  FindingRecord& r = records_[static_cast<size_t>(index)];
  r.closed_t = t;
  events->push_back(Event{t,
                          EventType::kFindingClose,
                          {{"id", Def(r.id).name},
                           {"subject", r.subject},
                           {"duration_s", std::round((t - r.opened_t) * 1000) / 1000}}});
}

void FindingLog::States(std::vector<Row::Finding>* out) const {
  out->clear();
  std::vector<Severity> worst;
  for (const FindingRecord& r : records_) {
    std::string_view id = Def(r.id).name;
    size_t i = 0;
    while (i < out->size() && (*out)[i].id != id) ++i;
    if (i == out->size()) {
      out->push_back(Row::Finding{id, {}, false});
      worst.push_back(r.severity);
    }
    worst[i] = std::max(worst[i], r.severity);
    (*out)[i].active = (*out)[i].active || !r.closed_t;
  }
  for (size_t i = 0; i < out->size(); ++i) (*out)[i].severity = SeverityName(worst[i]);
}

nlohmann::ordered_json FindingLog::Json(double end) const {
  std::vector<const FindingRecord*> order;
  for (const FindingRecord& r : records_) order.push_back(&r);
  auto lasted = [end](const FindingRecord* r) { return r->closed_t.value_or(end) - r->opened_t; };
  std::stable_sort(order.begin(), order.end(), [&](const FindingRecord* a, const FindingRecord* b) {
    if (a->severity != b->severity) return a->severity > b->severity;
    return lasted(a) > lasted(b);
  });
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const FindingRecord* r : order) {
    const FindingDef& def = Def(r->id);
    nlohmann::ordered_json j = {
        {"id", def.name}, {"severity", SeverityName(r->severity)}, {"opened_t", r->opened_t}};
    if (r->closed_t) j["closed_t"] = *r->closed_t;
    j["duration_s"] = std::round(lasted(r) * 10) / 10;
    j["subject"] = r->subject;
    j["evidence"] = r->evidence;
    j["message"] = r->message;
    j["advice"] = nlohmann::ordered_json::array({r->advice});
    out.push_back(std::move(j));
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

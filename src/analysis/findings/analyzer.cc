#include "analysis/findings/analyzer.h"

#include <algorithm>

#include "analysis/findings/profile_words.h"

namespace tv {

Analyzer::Analyzer(Thresholds thresholds, double interval_s, RuleChoice rules)
    : run_(thresholds, interval_s > 0 ? interval_s : 1), rules_(MakeRules(thresholds, rules)) {}

void Analyzer::OnMark(const Mark& m, std::vector<Event>* events) {
  switch (m.type) {
    case EventType::kClientStart: {
      // The time before the first training process spoke was start-up.
      if (!run_.markers) time_.FirstClient();
      run_.markers = true;
      if (run_.framework == Framework::kNone) run_.framework = ParseFramework(m.framework);
      run_.clients[m.pid] = m.rank;
      auto lowest = std::min_element(
          run_.clients.begin(), run_.clients.end(),
          [](auto& a, auto& b) { return std::max(a.second, 0) < std::max(b.second, 0); });
      run_.lowest_rank_pid = lowest->first;
      break;
    }
    case EventType::kClientEnd:
      run_.clients.erase(m.pid);
      if (m.pid == run_.lowest_rank_pid) time_.PhaseMark(m);
      break;
    case EventType::kPhaseBegin:
    case EventType::kPhaseEnd:
      if (m.pid == run_.lowest_rank_pid) time_.PhaseMark(m);
      break;
    case EventType::kEpochBegin:
      if (m.pid == run_.lowest_rank_pid && m.epoch) time_.EpochBegin(*m.epoch, m.t);
      break;
    case EventType::kEpochEnd:
      if (m.pid == run_.lowest_rank_pid && m.epoch) time_.EpochEnd(*m.epoch, m.t);
      break;
    case EventType::kProfile:
      if (m.profile) AddProfile(*m.profile);
      break;
    default:
      break;
  }
  RuleContext cx(run_, log_, events);
  for (auto& rule : rules_.all) rule->OnMark(m, cx);
}

void Analyzer::AddProfile(const ProfileCapture& p) {
  // The first process's profile tells the finding it was taken for; the
  // others' are in their events.
  for (const FindingDef& def : FindingDefs()) {
    if (def.name != p.reason) continue;
    int index = log_.LatestOpen(def.id);
    if (index < 0 || profiled_.contains(index)) return;
    profiled_.insert(index);
    const FindingRecord& r = log_.records()[static_cast<size_t>(index)].record;
    log_.Amend(index, ProfileEvidence(def.id, p), r.message + ProfileSentence(def.id, p), "");
  }
}

void Analyzer::OnFrame(const Frame& f, std::vector<Event>* events) {
  if (!run_.start_t) run_.start_t = f.t - f.elapsed_s;
  if (!run_.first_step_t && f.steps && *f.steps > 0) {
    run_.first_step_t = f.t;
    run_.steps_at_first = f.steps;
  }
  double spent_s = f.t - (ledger_t_ > 0 ? ledger_t_ : *run_.start_t);
  ledger_t_ = f.t;
  double row_s = std::clamp(f.t - run_.last_t, 0.0, run_.interval_s * 2);
  if (run_.last_t == 0) row_s = run_.interval_s;
  run_.last_t = f.t;
  if (run_.Judged(f) && run_.Training(f)) {
    judged_s_ += row_s;
    double sum = 0;
    int n = 0;
    for (const GpuFrame& g : f.gpus) {
      if (g.busy && g.job_memory_bytes.value_or(1) > 0) sum += *g.busy, ++n;
    }
    if (n > 0) time_.AddBusy(sum / n);
  }
  RuleContext cx(run_, log_, events);
  for (auto& rule : rules_.all) rule->OnFrame(f, cx);
  time_.Account(f, run_, rules_.progress->StalledNow(), spent_s);
}

void Analyzer::Finish(double t, std::vector<Event>* events) {
  time_.Finish(rules_.progress->StalledNow());
  run_.end_t = t;
  RuleContext cx(run_, log_, events);
  for (auto& rule : rules_.all) rule->Finish(cx);
}

}  // namespace tv

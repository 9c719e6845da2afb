// eval-heavy (eval_heavy.h).
#include "analysis/findings/eval_heavy.h"

#include "analysis/findings/format.h"

namespace tv {

void EvalHeavyRule::OnMark(const Mark& m, RuleContext& cx) {
  if (m.pid != cx.run.lowest_rank_pid) return;
  switch (m.type) {
    case EventType::kEpochBegin:
      if (m.epoch) epochs_[*m.epoch] = Epoch{.begin_t = m.t};
      break;
    case EventType::kEpochEnd:
      EndEpoch(m, cx);
      break;
    case EventType::kPhaseBegin:
      if (m.phase == "eval") {
        for (auto& [e, s] : epochs_) s.eval_since = m.t;
      }
      break;
    case EventType::kPhaseEnd:
      if (m.phase == "eval") {
        for (auto& [e, s] : epochs_) {
          if (s.eval_since) s.eval_s += m.t - *s.eval_since;
          s.eval_since.reset();
        }
      }
      break;
    default:
      break;
  }
}

void EvalHeavyRule::EndEpoch(const Mark& m, RuleContext& cx) {
  if (!m.epoch) return;
  auto it = epochs_.find(*m.epoch);
  if (it == epochs_.end()) return;
  Epoch s = it->second;
  epochs_.erase(it);
  if (s.eval_since) s.eval_s += m.t - *s.eval_since;
  double epoch_s = m.t - s.begin_t;
  if (epoch_s <= 0) return;
  double share = s.eval_s / epoch_s;
  bool cond = share >= cx.th[Th::kEvalShare];
  if (!cond) {
    if (tracker_.open()) cx.Close(tracker_, m.t);
    return;
  }
  if (tracker_.open()) return;
  Opening o;
  o.severity = share >= cx.th[Th::kEvalShareHigh] ? Severity::kWarning : Severity::kInfo;
  o.evidence = {{"epoch", *m.epoch},
                {"eval_s", Round4(s.eval_s)},
                {"epoch_s", Round4(epoch_s)},
                {"eval_share", Round4(share)}};
  o.message = fmt::format("Evaluation took {} of epoch {} ({} of {}).", Pct(share), *m.epoch,
                          Span(s.eval_s), Span(epoch_s));
  cx.Open(FindingId::kEvalHeavy, tracker_, m.t, FindingSubject::Job(), std::move(o));
}

}  // namespace tv

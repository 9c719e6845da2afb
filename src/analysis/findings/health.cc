// The health score: 100, less a point per percent of the time lost (data
// wait, stalls, GPUs held idle: goodput.h), points for the GPUs' idle share of
// the rest, and points for each other finding by its severity and the share of
// the time it covered, with the breakdown that adds up to it.
#include <algorithm>
#include <cmath>

#include "analysis/findings/analyzer.h"
#include "analysis/findings/format.h"

namespace tv {
namespace {

// Points a finding costs when it covers the whole span, by severity.
constexpr double kSeverityPoints[] = {5, 25, 50};  // info, warning, critical
// Points the GPUs cost when they are idle the whole judged time.
constexpr double kIdleGpuPoints = 40;

// The lost-time category whose points a finding's time already paid.
std::optional<Spent> PaidBy(FindingId id) {
  switch (id) {
    case FindingId::kInputBound:
      return Spent::kDataWait;
    case FindingId::kStalled:
      return Spent::kStalled;
    case FindingId::kGpuIdle:
    case FindingId::kGpuUnused:
      return Spent::kIdleGpu;
    default:
      return std::nullopt;
  }
}

// What a rule needs before it can judge, in words, for `not_judged`.
std::string Needs(FindingId id, const Thresholds& th) {
  switch (id) {
    case FindingId::kInputBound:
      return fmt::format("{:g} steps and {} of training after the first step",
                         th[Th::kJudgeMinSteps], Span(th[Th::kJudgeMin_s]));
    case FindingId::kStalled:
      return fmt::format("{:g} steps and {} of training after the first step, or {} after it",
                         th[Th::kJudgeMinSteps], Span(th[Th::kJudgeMin_s]),
                         Span(th[Th::kWarmup_s]));
    case FindingId::kStraggler:
    case FindingId::kThroughputDrop:
    case FindingId::kCpuBound:
    case FindingId::kIoBound:
      return fmt::format("{} of training after the warm-up ({})", Span(th[Th::kWindow_s]),
                         Span(th[Th::kWarmup_s]));
    case FindingId::kLowGpuUtil:
      return fmt::format("{} of training after the warm-up ({})", Span(th[Th::kLowGpuUtilWindow_s]),
                         Span(th[Th::kWarmup_s]));
    case FindingId::kGpuIdle:
      return fmt::format("{} holding a GPU after the warm-up ({})", Span(th[Th::kGpuIdle_s]),
                         Span(th[Th::kWarmup_s]));
    case FindingId::kHostMemoryLeak:
    case FindingId::kGpuMemoryLeak:
      return fmt::format("{:g} memory floors (one per epoch, else per {} after {})",
                         th[Th::kLeakMinFloors], Span(th[Th::kLeakWindow_s]),
                         Span(th[Th::kLeakWarmup_s]));
    default:
      return "more of the run";
  }
}

// The score of the span from `from_t` to `to_t`, whose time went as `spent`
// and whose GPUs were busy `busy`; appends the points taken to `breakdown`
// when given.
double ScoreOf(const std::vector<LoggedFinding>& records, double from_t, double to_t,
               std::optional<double> busy, const TimeLedger& spent,
               std::vector<HealthRecord::Deduction>* breakdown) {
  int score = 100;
  auto take = [&](int points, std::string what) {
    if (points <= 0) return;
    score -= points;
    if (breakdown != nullptr) breakdown->push_back({std::move(what), -points});
  };
  // Lost time, a point per percent: a run that waited or stalled 90 % of its
  // time scores 10 at most.
  for (size_t i = 0; i < kSpentCount; ++i) {
    auto s = static_cast<Spent>(i);
    if (!SpentLost(s)) continue;
    double share = spent.Share(s);
    std::string why;
    for (const LoggedFinding& r : records) {
      if (PaidBy(r.id) == s) why = fmt::format(" ({})", Def(r.id).name);
    }
    take(static_cast<int>(std::lround(share * 100)),
         fmt::format("{} {} of the time{}", SpentWords(s), Pct(share), why));
  }
  double lost = spent.LostShare();
  // The GPUs' idle share of the rest of the time.
  if (busy) {
    double idle = 1 - std::clamp(*busy, 0.0, 1.0);
    take(static_cast<int>(std::lround(idle * kIdleGpuPoints * (1 - std::min(lost, 1.0)))),
         fmt::format("GPUs busy {} of the judged time", Pct(*busy)));
  }
  double span = to_t - from_t;
  if (span <= 0) return std::max(score, 0);
  // Per finding id: its worst severity and the share of the span it covered
  // (on any GPU or rank), at most the whole span.
  struct Cost {
    Severity severity = Severity::kInfo;
    double share = 0;
  };
  std::map<FindingId, Cost> costs;
  for (const LoggedFinding& f : records) {
    const FindingRecord& r = f.record;
    // Its time is counted above, as lost time.
    if (auto paid = PaidBy(f.id); paid && spent[*paid] > 0) continue;
    double end = r.closed_t.value_or(to_t);
    double overlap = std::min(end, to_t) - std::max(r.opened_t, from_t);
    // A finding judged at an instant (an epoch's end) covers that epoch.
    if (overlap <= 0 && !(r.opened_t >= from_t && r.opened_t <= to_t)) continue;
    Cost& c = costs[f.id];
    c.severity = std::max(c.severity, r.severity);
    c.share = std::min(1.0, c.share + std::max(overlap, 0.0) / span);
    // Judged once for the whole run: eval-heavy, slow-start, and oom (the run died of it).
    if (f.id == FindingId::kEvalHeavy || f.id == FindingId::kSlowStart || f.id == FindingId::kOom) {
      c.share = 1;
    }
  }
  for (const auto& [id, c] : costs) {
    double share = std::max(c.share, 0.01);
    take(static_cast<int>(std::lround(kSeverityPoints[static_cast<int>(c.severity)] * share)),
         fmt::format("{} ({}) for {} of the time", Def(id).name, SeverityName(c.severity),
                     Pct(share)));
  }
  return std::max(score, 0);
}

}  // namespace

std::optional<double> Analyzer::HealthScore(const TimeLedger& spent) const {
  if (!JudgedAny()) return std::nullopt;
  return ScoreOf(log_.records(), *run_.start_t, run_.end_t.value_or(run_.last_t), time_.BusyMean(),
                 spent, nullptr);
}

HealthRecord Analyzer::Health() const {
  HealthRecord out;
  if (!JudgedAny()) {
    out.note = run_.markers && !run_.first_step_t
                   ? "not judged: no training step was seen"
                   : fmt::format("not judged: the run was shorter than its warm-up ({})",
                                 Span(run_.th[Th::kWarmup_s]));
  } else {
    std::optional<double> busy = time_.BusyMean();
    out.score = ScoreOf(log_.records(), *run_.start_t, run_.end_t.value_or(run_.last_t), busy,
                        time_.ledger(), &out.breakdown);
    if (busy) out.gpu_busy_ratio = Round4(*busy);
  }
  if (run_.start_t) out.goodput = time_.ledger().Record(StepsMeasured());
  for (size_t i = 0; i < kFindingCount; ++i) {
    auto id = static_cast<FindingId>(i);
    if (log_.Waiting(id)) out.not_judged.push_back({std::string(Def(id).name), Needs(id, run_.th)});
  }
  if (!JudgedAny()) return out;
  for (const TimeAccount::Epoch& s : time_.done_epochs()) {
    std::optional<double> epoch_busy;
    if (s.busy_rows > 0) epoch_busy = s.busy_sum / s.busy_rows;
    out.epochs.push_back(
        {s.epoch, ScoreOf(log_.records(), s.begin_t, s.end_t, epoch_busy, s.ledger, nullptr),
         s.ledger.Record(StepsMeasured())});
  }
  return out;
}

}  // namespace tv

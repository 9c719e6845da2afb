// The health score: 100, less points for the GPUs' idle share and for each
// finding by its severity and the share of the time it covered, with the
// breakdown that adds up to it.
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

}  // namespace

double Analyzer::ScoreOf(double from_t, double to_t, std::optional<double> busy,
                         nlohmann::ordered_json* breakdown) const {
  int score = 100;
  if (busy) {
    int points = static_cast<int>(std::lround((1 - std::clamp(*busy, 0.0, 1.0)) * kIdleGpuPoints));
    score -= points;
    if (breakdown != nullptr) {
      breakdown->push_back({{"what", fmt::format("GPUs busy {} of the judged time", Pct(*busy))},
                            {"points", -points}});
    }
  }
  double span = to_t - from_t;
  if (span <= 0) return score;
  // Per finding id: its worst severity and the share of the span it covered
  // (on any GPU or rank), at most the whole span.
  struct Cost {
    Severity severity = Severity::kInfo;
    double share = 0;
  };
  std::map<FindingId, Cost> costs;
  for (const Record& r : records_) {
    double end = r.closed_t.value_or(to_t);
    double overlap = std::min(end, to_t) - std::max(r.opened_t, from_t);
    // A finding judged at an instant (an epoch's end) covers that epoch.
    if (overlap <= 0 && !(r.opened_t >= from_t && r.opened_t <= to_t)) continue;
    Cost& c = costs[r.id];
    c.severity = std::max(c.severity, r.severity);
    c.share = std::min(1.0, c.share + std::max(overlap, 0.0) / span);
    // Judged once for the whole run: eval-heavy, slow-start, and oom (the run died of it).
    if (r.id == FindingId::kEvalHeavy || r.id == FindingId::kSlowStart || r.id == FindingId::kOom) {
      c.share = 1;
    }
  }
  for (const auto& [id, c] : costs) {
    double share = std::max(c.share, 0.01);
    int points =
        static_cast<int>(std::lround(kSeverityPoints[static_cast<int>(c.severity)] * share));
    score -= points;
    if (breakdown != nullptr) {
      breakdown->push_back({{"what", fmt::format("{} ({}) for {} of the time", Def(id).name,
                                                 SeverityName(c.severity), Pct(share))},
                            {"points", -points}});
    }
  }
  return std::max(score, 0);
}

std::optional<double> Analyzer::BusyMean() const {
  if (busy_rows_ == 0) return std::nullopt;
  return busy_sum_ / busy_rows_;
}

std::optional<double> Analyzer::HealthScore() const {
  if (!JudgedAny()) return std::nullopt;
  return ScoreOf(*start_t_, end_t_.value_or(last_t_), BusyMean(), nullptr);
}

nlohmann::ordered_json Analyzer::Health() const {
  if (!JudgedAny()) {
    return {{"note", markers_ && !first_step_t_
                         ? "not judged: no training step was seen"
                         : fmt::format("not judged: the run was shorter than its warm-up ({})",
                                       Span(th_[Th::kWarmup_s]))}};
  }
  nlohmann::ordered_json breakdown = nlohmann::ordered_json::array();
  std::optional<double> busy = BusyMean();
  double score = ScoreOf(*start_t_, end_t_.value_or(last_t_), busy, &breakdown);
  nlohmann::ordered_json out = {{"score", score}, {"breakdown", std::move(breakdown)}};
  if (busy) out["gpu_busy_ratio"] = Round4(*busy);
  nlohmann::ordered_json epochs = nlohmann::ordered_json::array();
  for (const auto& [epoch, s] : done_epochs_) {
    std::optional<double> epoch_busy;
    if (s.busy_rows > 0) epoch_busy = s.busy_sum / s.busy_rows;
    epochs.push_back(
        {{"epoch", epoch}, {"score", ScoreOf(s.begin_t, s.end_t, epoch_busy, nullptr)}});
  }
  if (!epochs.empty()) out["epochs"] = std::move(epochs);
  return out;
}

}  // namespace tv

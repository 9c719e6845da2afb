#include "store/run_summary.h"

#include "store/record_json.h"

namespace tv {
namespace {

constexpr std::string_view kEpochs = "epochs";
constexpr std::string_view kPhases = "phases";
constexpr std::string_view kFindings = "findings";
constexpr std::string_view kRowsUnwritten = "rows_unwritten";
constexpr std::string_view kJsonlError = "jsonl_error";
constexpr std::string_view kHealth = "health";
constexpr std::string_view kMemoryTrends = "memory_trends";
constexpr std::string_view kAlertsKey = "alerts";
constexpr std::string_view kCost = "cost";

template <typename Json>
Status ReadSummary(const Json& j, RunSummary* out) {
  *out = RunSummary{};
  if (!j.is_object()) return Status::Invalid("the summary is not a JSON object");
  // The lenient parts: what cannot be read is left unset.
  (void)OutcomeFromSummary(j, &out->outcome);
  (void)TotalsFromSummary(j, &out->totals);
  (void)FindingsFromSummary(j, &out->findings);
  std::string unused;
  RecordFields<Json> f(j, "", &unused, RecordReading::kKeepGoing);
  (void)f.Object();
  f.Whole(kRowsUnwritten, &out->rows_unwritten);
  f.Text(kJsonlError, &out->jsonl_error);
  if (j.contains(kHealth)) (void)HealthFromSummary(j, &out->health.emplace());
  if (j.contains(kMemoryTrends)) (void)MemoryTrendsFromSummary(j, &out->memory_trends.emplace());
  if (j.contains(kAlertsKey)) (void)AlertsFromSummary(j, &out->alerts.emplace());
  out->cost = CostOf(j);
  (void)ProcessesFromSummary(j, &out->processes);
  // The parts every table is built from: of their records' shape, or refused.
  Status s = EpochsFromSummary(j, &out->epochs);
  if (s.ok()) s = PhasesFromSummary(j, &out->phases);
  return s;
}

}  // namespace

RunSummary SummaryOf(const RunOutcome& outcome, const Row& run_row) {
  RunSummary s;
  s.outcome = AsWritten(outcome);
  s.outcome.samples = run_row.samples;
  s.totals = TotalsOf(run_row);
  return s;
}

nlohmann::ordered_json RunSummaryJson(const RunSummary& s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  PutOutcome(s.outcome, &j);
  PutTotals(s.totals, &j);
  j[kEpochs] = EpochsToJson(s.epochs);
  j[kPhases] = PhasesToJson(s.phases);
  j[kFindings] = FindingsJson(s.findings);
  Put(j, kRowsUnwritten, s.rows_unwritten);
  if (!s.jsonl_error.empty()) j[kJsonlError] = s.jsonl_error;
  if (s.health) j[kHealth] = HealthJson(*s.health);
  if (s.memory_trends) j[kMemoryTrends] = MemoryTrendsJson(*s.memory_trends);
  if (s.alerts) SetSummaryAlerts(*s.alerts, &j);
  if (s.cost) j[kCost] = ToJson(*s.cost);
  PutProcesses(s.processes, &j);
  return j;
}

Status RunSummaryFromJson(const nlohmann::ordered_json& j, RunSummary* out) {
  return ReadSummary(j, out);
}
Status RunSummaryFromJson(const nlohmann::json& j, RunSummary* out) { return ReadSummary(j, out); }

}  // namespace tv

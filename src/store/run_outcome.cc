#include "store/run_outcome.h"

#include <cmath>

#include "store/record_json.h"

namespace tv {
namespace {

using OJson = nlohmann::ordered_json;

double Millisecond(double t) { return std::round(t * 1000) / 1000; }

OJson NumberOrNull(const std::optional<int>& v) { return v ? OJson(*v) : OJson(); }

template <typename Json>
Status ReadOutcome(const Json& summary, RunOutcome* out) {
  *out = RunOutcome{};
  std::string error;
  RecordFields<Json> f(summary, "", &error, RecordReading::kKeepGoing);
  if (!f.Object()) return Status::Invalid(error);
  f.Texts("command", &out->command);
  f.Text("run_dir", &out->run_dir);
  f.Number("start_t", &out->start_t);
  f.Number("end_t", &out->end_t);
  f.Number("duration_s", &out->duration_s);
  f.Whole("exit_code", &out->exit_code);
  f.Whole("exit_signal", &out->exit_signal);
  for (auto [key, field] :
       {std::pair{"samples", &out->samples}, std::pair{"rows", &out->rows_written},
        std::pair{"rows_dropped", &out->rows_dropped}, std::pair{"late_ticks", &out->late_ticks}}) {
    int64_t n = 0;
    f.Whole(key, &n);
    *field = n > 0 ? static_cast<uint64_t>(n) : 0;
  }
  return ReadingStatus(error);
}

}  // namespace

RunOutcome AsWritten(RunOutcome o) {
  double start = o.start_t.value_or(0), end = o.end_t.value_or(0);
  o.start_t = Millisecond(start);
  o.end_t = Millisecond(end);
  // Of the times as written, so that writing it again changes nothing.
  o.duration_s = Millisecond(*o.end_t - *o.start_t);
  return o;
}

void PutOutcome(const RunOutcome& outcome, OJson* summary) {
  OJson& j = *summary;
  RunOutcome o = AsWritten(outcome);
  j["schema_version"] = 1;
  j["command"] = o.command;
  j["run_dir"] = o.run_dir;
  j["start_t"] = *o.start_t;
  j["end_t"] = *o.end_t;
  j["duration_s"] = *o.duration_s;
  j["exit_code"] = NumberOrNull(o.exit_code);
  j["exit_signal"] = NumberOrNull(o.exit_signal);
  j["samples"] = o.samples;
  j["rows"] = o.rows_written;
  j["rows_dropped"] = o.rows_dropped;
  j["late_ticks"] = o.late_ticks;
}

Status OutcomeFromSummary(const nlohmann::json& summary, RunOutcome* out) {
  return ReadOutcome(summary, out);
}
Status OutcomeFromSummary(const OJson& summary, RunOutcome* out) {
  return ReadOutcome(summary, out);
}

}  // namespace tv

#include "store/run_totals.h"

#include <cmath>
#include <string>

#include "store/record_json.h"

namespace tv {
namespace {

using OJson = nlohmann::ordered_json;

std::span<const MetricDef> TableOf(bool gpu) { return gpu ? GpuMetrics() : SampleMetrics(); }

// A figure as written: whole quantities whole, the rest to 4 decimals.
double Rounded(double v, bool integral) {
  return integral ? static_cast<double>(std::llround(v)) : std::round(v * 1e4) / 1e4;
}

// Counts and other whole quantities are JSON integers, the rest rounded.
OJson Written(double v, bool integral) {
  if (integral) return static_cast<int64_t>(std::llround(v));
  return Rounded(v, false);
}

Totals TotalsOfStats(bool gpu, const std::vector<std::optional<Stat>>& values) {
  Totals t;
  t.gpu = gpu;
  std::span<const MetricDef> defs = TableOf(gpu);
  t.values.resize(defs.size());
  for (size_t i = 0; i < defs.size() && i < values.size(); ++i) {
    if (!values[i]) continue;
    bool integral = IsIntegral(defs[i].unit);
    t.values[i] = defs[i].kind == Kind::kGauge
                      ? Total{Rounded(values[i]->mean, integral), Rounded(values[i]->max, integral)}
                      : Total{Rounded(values[i]->last, integral), std::nullopt};
  }
  return t;
}

// The figures of `t` whose metric is of `scope`, into the object `out`.
void PutScope(const Totals& t, Scope scope, OJson* out) {
  std::span<const MetricDef> defs = TableOf(t.gpu);
  for (size_t i = 0; i < defs.size() && i < t.values.size(); ++i) {
    const MetricDef& m = defs[i];
    if (m.scope != scope || !t.values[i]) continue;
    bool integral = IsIntegral(m.unit);
    const Total& total = *t.values[i];
    std::string key(JsonKey(m));
    if (m.kind == Kind::kGauge) {
      OJson gauge = OJson::object();
      if (total.value) gauge["mean"] = Written(*total.value, integral);
      if (total.max) gauge["max"] = Written(*total.max, integral);
      (*out)[key] = std::move(gauge);
    } else if (total.value) {
      (*out)[key] = Written(*total.value, integral);
    }
  }
}

// How the figures are written: a summary's gauge as {"mean", "max"}, a row's
// as its mean with `<key>_max` beside it.
enum class Shape { kSummary, kRow };

// The figures of the object `fields` whose metric is of `scope`, into `t`.
template <typename Json>
void ReadScope(RecordFields<Json>& fields, Scope scope, Shape shape, Totals* t) {
  std::span<const MetricDef> defs = TableOf(t->gpu);
  t->values.resize(defs.size());
  for (size_t i = 0; i < defs.size(); ++i) {
    const MetricDef& m = defs[i];
    if (m.scope != scope) continue;
    std::string_view key = JsonKey(m);
    if (m.kind != Kind::kGauge) {
      std::optional<double> v;
      fields.Number(key, &v);
      if (v) t->values[i] = Total{v, std::nullopt};
      continue;
    }
    std::optional<double> mean, max;
    if (shape == Shape::kRow) {
      fields.Number(key, &mean);
      fields.Number(std::string(key) + "_max", &max);
    } else {
      fields.Member(key, [&](RecordFields<Json>& gauge) {
        gauge.Number("mean", &mean);
        gauge.Number("max", &max);
      });
    }
    if (mean || max) t->values[i] = Total{mean, max};
  }
}

template <typename Json>
Status ReadTotals(const Json& summary, Shape shape, RunTotals* out) {
  *out = RunTotals{};
  out->run.values.resize(SampleMetrics().size());
  std::string error;
  RecordFields<Json> top(summary, "", &error, RecordReading::kKeepGoing);
  if (!top.Object()) return Status::Invalid(error);
  for (Scope scope : {Scope::kHost, Scope::kJob, Scope::kTraining}) {
    top.Member(ScopeName(scope),
               [&](RecordFields<Json>& f) { ReadScope(f, scope, shape, &out->run); });
  }
  top.Objects("gpus", [&](RecordFields<Json>& f) {
    GpuTotals& g = out->gpus.emplace_back();
    g.gpu = true;
    f.Whole("index", &g.index);
    f.Whole("physical_index", &g.physical_index);
    f.Whole("mig", &g.mig);
    ReadScope(f, Scope::kGpu, shape, &g);
  });
  return ReadingStatus(error);
}

}  // namespace

const Total* Totals::Find(MetricId id) const {
  if (id.gpu != gpu || id.index >= values.size() || !values[id.index]) return nullptr;
  return &*values[id.index];
}

std::optional<double> Totals::Value(MetricId id) const {
  const Total* t = Find(id);
  return t ? t->value : std::nullopt;
}

std::optional<double> Totals::Max(MetricId id) const {
  const Total* t = Find(id);
  if (t == nullptr) return std::nullopt;
  return Def(id).kind == Kind::kGauge ? t->max : t->value;
}

RunTotals TotalsOf(const Row& run_row) {
  RunTotals t;
  t.run = TotalsOfStats(false, run_row.values);
  for (const GpuRow& g : run_row.gpus) {
    GpuTotals gt;
    static_cast<Totals&>(gt) = TotalsOfStats(true, g.values);
    gt.index = g.index;
    gt.physical_index = g.physical_index;
    if (g.mig_instance >= 0) gt.mig = g.mig_instance;
    t.gpus.push_back(std::move(gt));
  }
  return t;
}

void PutTotals(const RunTotals& totals, OJson* summary) {
  OJson& s = *summary;
  s["host"] = OJson::object();
  s["job"] = OJson::object();
  PutScope(totals.run, Scope::kHost, &s["host"]);
  PutScope(totals.run, Scope::kJob, &s["job"]);
  OJson training = OJson::object();
  PutScope(totals.run, Scope::kTraining, &training);
  if (!training.empty()) s["training"] = std::move(training);
  s["gpus"] = OJson::array();
  for (const GpuTotals& g : totals.gpus) {
    OJson gj = {{"index", g.index}, {"physical_index", g.physical_index}};
    Put(gj, "mig", g.mig);
    PutScope(g, Scope::kGpu, &gj);
    s["gpus"].push_back(std::move(gj));
  }
}

Status TotalsFromSummary(const nlohmann::json& summary, RunTotals* out) {
  return ReadTotals(summary, Shape::kSummary, out);
}
Status TotalsFromSummary(const OJson& summary, RunTotals* out) {
  return ReadTotals(summary, Shape::kSummary, out);
}
Status TotalsFromRow(const nlohmann::json& row, RunTotals* out) {
  return ReadTotals(row, Shape::kRow, out);
}

}  // namespace tv

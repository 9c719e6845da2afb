// RunTotals: summary.json's whole-run figures ("host", "job", "training" and
// "gpus", docs/schema.md), typed: for each metric of the table the run
// measured, a gauge's mean and max over the run, a counter's or a state's last
// value. This file alone knows how they are keyed: the run writes them with
// PutTotals, and the summary text, the report, `compare` and the run history
// read them back with TotalsFromSummary and ask by handle
// (metric::kJobCpuCores), never by a key string.
//
// PutTotals writes each gauge as {"mean", "max"} and each counter or state as
// its number; whole units as integers, the rest rounded to 4 decimals.
// TotalsFromSummary is lenient, as every view reads a summary: a figure that
// is absent or of another type stays unknown (the first such is named in the
// Status), keys outside the table are ignored, the rest is read.
//
// Thread-safe: plain data and pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/metrics.h"
#include "core/row.h"
#include "core/status.h"

namespace tv {

// One metric over the run: a gauge's mean (in `value`) and max; a counter's
// or state's last value (no max). A summary may hold a gauge's max alone.
struct Total {
  std::optional<double> value;
  std::optional<double> max;
};

// The figures of one table: SampleMetrics() (host, job, training) or
// GpuMetrics() (one GPU), parallel to it.
struct Totals {
  bool gpu = false;  // parallel to GpuMetrics(), else to SampleMetrics()
  std::vector<std::optional<Total>> values;
  // A gauge's mean, a counter's or state's value; nullopt when not measured
  // (or `id` is of the other table).
  std::optional<double> Value(MetricId id) const;
  // A gauge's max; a counter's or state's value.
  std::optional<double> Max(MetricId id) const;
  bool Has(MetricId id) const { return Find(id) != nullptr; }

 private:
  const Total* Find(MetricId id) const;
};

struct GpuTotals : Totals {
  int index = 0;
  int physical_index = 0;
  std::optional<int> mig;  // the GPU instance of a MIG slice
};

struct RunTotals {
  Totals run;  // host, job and training
  std::vector<GpuTotals> gpus;
};

// The totals of the whole-run row (every sample of the run reduced), as
// summary.json holds them: whole units whole, the rest to 4 decimals.
RunTotals TotalsOf(const Row& run_row);

// Sets `summary`'s "host" and "job" (objects, empty when nothing was
// measured), "training" (only with training figures) and "gpus" (an array).
void PutTotals(const RunTotals& totals, nlohmann::ordered_json* summary);

Status TotalsFromSummary(const nlohmann::json& summary, RunTotals* out);
Status TotalsFromSummary(const nlohmann::ordered_json& summary, RunTotals* out);
// The figures of a samples.jsonl row, read as leniently: a gauge's mean over
// the row as its value, its `_max` where the row keeps one as its max.
Status TotalsFromRow(const nlohmann::json& row, RunTotals* out);

}  // namespace tv

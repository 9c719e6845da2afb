// The pieces of a Prometheus exposition that every family is written with
// (sinks/prom_text.cc for a run's and the node's series, sinks/prom_jobs.cc
// for the jobs of `serve`). Thread-safe: no state.
#pragma once

#include <string>
#include <string_view>

#include "core/metrics.h"
#include "sinks/prom_text.h"

namespace tv {

// Appends `,name="value"` (or `{name="value"` for the first label).
void AppendLabel(std::string_view name, std::string_view value, PromFormat format, bool* first,
                 std::string* out);
// The name and the labels every series carries (host, run, job).
void AppendSeriesStart(std::string_view name, const PromLabels& labels, PromFormat format,
                       std::string* out, bool* first);
void AppendSampleEnd(double v, bool first, std::string* out);
void AppendFamilyHeader(const MetricDef& m, std::string_view name, PromFormat format,
                        std::string* out);
void AppendGaugeHeader(std::string_view name, std::string_view help, PromFormat format,
                       std::string* out);

// The series of the node's jobs (Row::jobs, Row::jobs_dropped; `serve`).
void AppendJobSeries(const Row& row, const PromLabels& labels, PromFormat format, std::string* out);

}  // namespace tv

// Prometheus exposition of one row: text format 0.0.4 and OpenMetrics 1.0.0.
// A pure function of the row and the labels, so it is tested apart from the
// HTTP server and the Pushgateway client that send it.
//
// Values: a gauge is the row's interval mean (the same number samples.jsonl
// writes), a counter its last value. Absent values are left out, never 0.
// Never writes timestamps (Pushgateway refuses them). Thread-safe: no state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/row.h"

namespace tv {

enum class PromFormat { kText004, kOpenMetrics };

inline constexpr std::string_view kPromTextContentType = "text/plain; version=0.0.4; charset=utf-8";
inline constexpr std::string_view kOpenMetricsContentType =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

struct PromGpuLabel {
  int index = 0;
  int mig_instance = -1;
  std::string model;  // "NVIDIA H100 80GB HBM3"; empty: no gpu_model label
};

// Labels of every series: host, run (the run's name; "run", not "job",
// because Prometheus owns the job label of a scrape target) and, for a run
// that belongs to a job, job (the job's id, run/run_job.h; scraped with
// honor_labels: true, it wins over the scrape's).
struct PromLabels {
  std::string host;
  std::string run;
  std::vector<PromGpuLabel> gpus;  // models by index and MIG instance, from meta.json
  std::string job;  // empty: no job label (and always for `serve`, whose jobs label their own)
  // Whether the `name` label of GPU processes outside the job is written. Off
  // where the metrics can be read from other machines (another user's process
  // names are theirs), unless --prometheus-process-names asks for them.
  bool outside_process_names = false;
  // The whole node (`serve`): the jobs' series (Row::jobs) instead of the
  // per-process ones, whose PIDs come and go.
  bool node = false;
};

// The whole exposition; OpenMetrics ends with "# EOF".
std::string RenderPrometheus(const Row& row, const PromLabels& labels, PromFormat format);

// Whether an Accept header asks for OpenMetrics.
bool WantsOpenMetrics(std::string_view accept);

// Appends `value` as a label value of `format`. Label values may be foreign
// text (another user's process name), so the value is first made visible
// (core/escape.h: control bytes become Control Pictures such as "␛" and "␊",
// invalid UTF-8 and C1 controls U+FFFD), then \\ and \" are escaped (as in
// text 0.0.4 and OpenMetrics 1.0.0). No raw control byte, and so no \n, is
// ever written; Prometheus reads back exactly the visible text.
void AppendEscapedLabelValue(std::string_view value, PromFormat format, std::string* out);
// Appends `text` with every invalid UTF-8 sequence replaced by U+FFFD.
void AppendValidUtf8(std::string_view text, std::string* out);
// Appends `help` escaped for # HELP (\\, \n; OpenMetrics also \").
void AppendEscapedHelp(std::string_view help, PromFormat format, std::string* out);
// Appends a sample value: shortest round-trip decimal, NaN, +Inf, -Inf.
void AppendPromValue(double v, std::string* out);

}  // namespace tv

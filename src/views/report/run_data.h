// One run directory as a report shows it: meta.json, summary.json (absent
// while the run is still written), the events that mark the time axis, and
// the charted series of samples.jsonl; and the page's data for its charts.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/cost_record.h"
#include "store/finding_record.h"
#include "store/headline.h"
#include "store/health_record.h"
#include "store/meta_record.h"
#include "store/run_outcome.h"
#include "store/run_summary.h"
#include "store/run_totals.h"
#include "views/report/samples.h"

namespace tv {

// A span of the time axis, in seconds since the run's start.
struct Span {
  double start_s = 0;
  std::optional<double> end_s;  // absent: still open at the end
  std::string kind;             // "epoch", "phase", "finding", "alert"
  std::string label;
};

// What the caller (the CLI) judged or costed for a run with the run's own code,
// for the page to show in place of what summary.json holds or lacks: the
// views compute no verdict and no cost of their own.
struct ReportJudged {
  // summary.json "cost" to show instead of the summary's (a run written before
  // costs existed; one costed at other rates); none: the summary's.
  std::optional<CostRecord> cost;
  // The health and findings to show instead of the summary's (judged with
  // other thresholds; a run still being written, judged so far); none: the
  // summary's.
  std::optional<HealthRecord> health;
  std::vector<FindingRecord> findings;  // with `health`
  // Said under the header: "judged with --config x.toml: input_bound_ratio 0.5
  // (the run used 0.2)"; empty: nothing.
  std::string note;
};

// A job of several nodes as the caller judged it (analysis/findings/joined.h),
// one ReportRun per node in the same order.
struct ReportJob {
  std::string id;                  // the job id; empty when none
  std::vector<std::string> nodes;  // each node's name
  // Added to each node's times to line them up with the first node's clock:
  // node i's elapsed times are drawn from the first node's start.
  std::vector<double> clock_offsets_s;
  HealthRecord health;      // the job's: its lowest node's
  std::string health_node;  // that node
  // The job's, each subject with its node, its times on the first node's clock.
  std::vector<FindingRecord> findings;
  std::optional<CostRecord> cost;  // the nodes' summed; none unless every node has one
  std::vector<std::string> notes;  // how the clocks were lined up
};

struct ReportRun {
  std::string dir;
  std::optional<MetaRecord> meta;  // none when meta.json is missing or unusable
  // summary.json as the run wrote it; none while it is missing.
  std::optional<RunSummary> summary;
  // The ReportJudged cost, else the summary's; none without either.
  std::optional<CostRecord> cost;
  RunHeadline headline;  // the summary's, with `cost` for its own
  // The health and findings shown: the ReportJudged ones, else the summary's
  // (those that can be read); empty when neither.
  HealthRecord health;
  std::vector<FindingRecord> findings;
  std::string judged_note;  // ReportJudged::note
  RunSeries series;
  double start_t = 0;       // Unix time of the time axis' 0
  double end_s = 0;         // the last row's (or the summary's) elapsed time
  std::vector<Span> spans;  // epochs, phases, findings, alerts, in that order
  std::string events_note;  // "skipped N lines longer than 4 MiB in ..." (LongLinesNote)

  // The summary's outcome and whole-run figures; empty without a summary.
  const RunOutcome& outcome() const;
  const RunTotals& totals() const;
};

// Reads the run directory `dir` through core/run_file.h's limits. Throws
// std::runtime_error naming the file when it has no samples.jsonl, when
// samples.jsonl holds no row, when summary.json, samples.jsonl or
// events.jsonl cannot be used (not a regular file, too large, too deep, not
// JSON, the wrong shape); a meta.json that cannot be used is left out, said on
// stderr.
// `judged`: what the caller judged or costed for it.
ReportRun LoadReportRun(const std::string& dir, const ReportJudged& judged = {});

// The epochs, phases, findings and alerts of a run on its time axis, from the
// summary (epochs; null while the run has none), the findings shown and the
// events (phases, alerts; epochs while the run has no summary). `events` holds
// the parsed lines of events.jsonl.
std::vector<Span> RunSpans(const RunSummary* summary, const std::vector<FindingRecord>& findings,
                           const std::vector<nlohmann::json>& events, double start_t, double end_s);

// The page's data of one run as compact JSON: {"label", "x": [elapsed s],
// "series": [{"chart", "label", "scale", "v": [...]}], "spans": [[start, end,
// kind, label]]}, the series downsampled to `buckets` min/max buckets and
// rounded to what a chart shows (ratios in percent, bytes in MiB, energy in
// Wh). Not yet safe inside a <script>: see ScriptSafe (page.h). `x_offset_s` is
// added to every time (x, spans, end): a node's place on its job's time axis.
std::string RunDataJson(const ReportRun& run, const std::string& label, size_t buckets,
                        double x_offset_s = 0);

}  // namespace tv

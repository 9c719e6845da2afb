// `trainvitals compare`: the headline figures of two or more runs side by
// side, with each one's change against the first run, and their epochs
// matched by number where the runs have epochs. A column may be a job on
// several nodes (`compare --job ID`): its figures are its nodes' put together
// (each figure's rule is in compare.cc: sums for what the job used, the
// slowest node's pace, the largest node's peak, the lowest node's health).
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/run_summary.h"

namespace tv {

struct ComparedRun {
  std::string label;  // the run's name (RunLabel), else its directory's; "job ID"
  // summary.json, with its cost: one run's, or each node's of a job.
  std::vector<RunSummary> summaries;
  std::optional<double> start_t;  // meta.json's (a job's first node's), to tell runs apart
  std::string job;                // the job's id when the column is a job's nodes
};

// The columns of the epochs every run has, in their order.
enum class EpochColumn { kDuration, kStepsPerSecond, kEnergy, kLoss };
inline constexpr size_t kEpochColumns = 4;

// A run's value of each figure: none where it is unknown.
using RunValues = std::vector<std::optional<double>>;

struct ComparedFigure {
  std::string_view key;   // "duration_s", "gpu_busy_ratio", ...
  std::string_view what;  // "duration", "GPU busy", ...
  // "seconds", "bytes", "ratio", "score", "cores", "gpu_hours", "kwh", "kg",
  // "money"; empty for a plain number.
  std::string_view unit;
  RunValues values;
  // Against the first run's value: relative ((b - a) / a), in points for
  // shares and the health score (b - a); none for the first run, where either
  // is unknown, or for money in two currencies.
  RunValues changes;
  // Money only: each run's currency, empty for a run without money.
  std::vector<std::string> currencies;
};

struct ComparedEpoch {
  int64_t epoch = 0;
  // Each column's values (EpochColumn); empty where no run has one.
  std::array<RunValues, kEpochColumns> columns;
};

struct Comparison {
  struct Run {
    std::string label;  // made unique: "train.py (14:27:03)"
    std::string run_dir;
    std::string job;                    // a job's column: its id
    std::vector<std::string> run_dirs;  // a job's column: its nodes' directories
  };
  std::vector<Run> runs;
  std::vector<ComparedFigure> figures;  // those some run has
  std::string currency;                 // the one currency of every priced run; else empty
  std::vector<ComparedEpoch> epochs;    // the complete epochs every run has, by number
};

// Labels are the runs' names, made unique with their start time
// ("train.py (14:27:03)") where two share one.
Comparison CompareRuns(const std::vector<ComparedRun>& runs);

// `compare --json`: {"runs": [{label, run_dir}, or for a job {label, job,
// run_dirs}], "figures": [{key, what, unit,
// values[], changes[]}], "epochs": [{epoch, duration_s[], steps_per_second[],
// energy_kwh[], loss[]}]}, null for an unknown value. The money figure carries
// each run's "currencies" (null without money), and the comparison its
// "currency" when every priced run has the same.
nlohmann::ordered_json ComparisonJson(const Comparison& comparison);

// The change from `a` to `b` relative to `a`, rounded as the comparison's
// changes are; none when either is unknown or `a` is 0.
std::optional<double> RelativeChange(std::optional<double> a, std::optional<double> b);

// The comparison as a terminal table (compare_text.cc) ("steps/s   120.3   162.4 +35%"): each
// row in one unit, chosen by its largest value (all GPU-min, all GiB), money
// with its currency; a label too long for its column is shortened there and
// said whole above the table.
std::string FormatComparison(const Comparison& comparison);

}  // namespace tv

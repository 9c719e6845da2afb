// The end-of-run summary: summary.json and the text printed when a run ends.
// The text is rendered from the JSON, so both always hold the same numbers.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/row.h"

namespace tv {

struct RunOutcome {
  std::vector<std::string> command;
  std::string run_dir;
  double start_t = 0;
  double end_t = 0;
  std::optional<int> exit_code;    // absent for attach: the target's code is not ours to see
  std::optional<int> exit_signal;  // the signal that killed the command
  uint64_t rows_written = 0;
  uint64_t rows_dropped = 0;
  uint64_t late_ticks = 0;
};

// summary.json: the outcome plus, per metric of the table, {"mean","max"} for
// gauges and the last value for counters, over the whole run.
nlohmann::ordered_json BuildSummary(const RunOutcome& outcome, const Row& run_row);

// The human summary printed at the end (several lines, ends with a newline).
std::string FormatSummary(const nlohmann::ordered_json& summary);

}  // namespace tv

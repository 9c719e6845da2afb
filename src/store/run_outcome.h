// RunOutcome: how a run went, the keys summary.json opens with (docs/schema.md
// "summary.json": command, run_dir, start_t, end_t, duration_s, exit_code,
// exit_signal, samples, rows, rows_dropped, late_ticks). This file alone
// knows them: the run fills a RunOutcome and PutOutcome writes it; the summary
// text, the report, `compare` and the cost read it back with
// OutcomeFromSummary.
//
// PutOutcome writes "schema_version" 1 first, the times to the millisecond,
// the duration as end_t - start_t, and a null exit code or signal when there
// is none. OutcomeFromSummary is lenient, as every view reads a summary: a key
// that is absent, null or of another type leaves its field unset (the first
// of another type is named in the Status); the rest is read.
//
// Thread-safe: plain data and pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace tv {

struct RunOutcome {
  std::vector<std::string> command;
  std::string run_dir;
  std::optional<double> start_t;  // Unix seconds
  std::optional<double> end_t;
  std::optional<double> duration_s;  // read back; written as end_t - start_t
  std::optional<int> exit_code;      // absent for attach: the target's code is not ours to see
  std::optional<int> exit_signal;    // the signal that killed the command
  uint64_t samples = 0;              // samples over the whole run
  uint64_t rows_written = 0;
  uint64_t rows_dropped = 0;
  uint64_t late_ticks = 0;
};

// `outcome` as summary.json holds it: the times to the millisecond (0 when
// unknown) and the duration end_t - start_t.
RunOutcome AsWritten(RunOutcome outcome);

// Sets `summary`'s outcome keys, in the order summary.json has them.
void PutOutcome(const RunOutcome& outcome, nlohmann::ordered_json* summary);

Status OutcomeFromSummary(const nlohmann::json& summary, RunOutcome* out);
Status OutcomeFromSummary(const nlohmann::ordered_json& summary, RunOutcome* out);

}  // namespace tv

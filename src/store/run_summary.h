// RunSummary: summary.json, typed (docs/schema.md "summary.json"). Each part
// is the record of its own file (run_outcome.h, run_totals.h, epoch_record.h,
// finding_record.h, health_record.h, memory_trend_record.h, alert_record.h,
// cost_record.h, process_record.h); this file puts them together. The run
// builds one RunSummary, each observer filling its own part
// (store/summary_part.h), and writes it with RunSummaryJson; every reader of a
// run directory reads it once with RunSummaryFromJson and meets only fields.
//
// RunSummaryJson writes the keys in the order summary.json has always had
// them: the outcome's keys, host, job, training, gpus, epochs, phases,
// findings, rows_unwritten and jsonl_error (when set), health and
// memory_trends (when the run was judged), alerts (when alert rules ran), cost
// (when costed), processes, leaked and exception (each when set).
//
// RunSummaryFromJson reads every part as leniently as its own reader does (a
// key that is absent or of another type leaves its field unset, the rest is
// read) with one exception: the epochs and phases, from which the cost and
// every table of epochs and phases are built, must each be of its record's
// shape. The Status names the first key of another type in them ("key
// epochs[2].steps: expected a whole number, got a string"); a reader of a run
// directory refuses such a summary.
//
// Thread-safe: plain data and pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/row.h"
#include "core/status.h"
#include "store/alert_record.h"
#include "store/cost_record.h"
#include "store/epoch_record.h"
#include "store/finding_record.h"
#include "store/health_record.h"
#include "store/memory_trend_record.h"
#include "store/process_record.h"
#include "store/run_outcome.h"
#include "store/run_totals.h"

namespace tv {

struct RunSummary {
  RunOutcome outcome;
  RunTotals totals;
  std::vector<EpochRecord> epochs;
  PhaseRecords phases;
  std::vector<FindingRecord> findings;
  std::optional<int64_t> rows_unwritten;  // rows samples.jsonl lost
  std::string jsonl_error;                // why samples.jsonl could not be opened
  // The findings' part: present when the run was judged.
  std::optional<HealthRecord> health;
  std::optional<std::vector<MemoryTrendRecord>> memory_trends;
  std::optional<std::vector<AlertRecord>> alerts;  // when alert rules ran
  std::optional<CostRecord> cost;                  // none: not costed
  RunProcesses processes;
};

// The summary of a run that ended as `outcome` says (as written: AsWritten),
// with the samples and the whole-run figures of `run_row` (every sample of the
// run reduced); the observers' parts still to be added.
RunSummary SummaryOf(const RunOutcome& outcome, const Row& run_row);

// summary.json of `summary`, its keys in the order above.
nlohmann::ordered_json RunSummaryJson(const RunSummary& summary);

// Reads summary.json (`j`, an object) into *out; see the top of this file.
Status RunSummaryFromJson(const nlohmann::ordered_json& j, RunSummary* out);
Status RunSummaryFromJson(const nlohmann::json& j, RunSummary* out);

}  // namespace tv

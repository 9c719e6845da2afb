// What a run leaves once it ended: summary.json, collected from the outcome,
// the whole-run figures and each observer's part in the declared order
// (run/pipeline.h kSummaryOrder), written even on a disk that is full for a
// while; and report.html when asked for.
//
// Thread safety: the controlling thread, after the sampler stopped.
#pragma once

#include <string>

#include "core/row.h"
#include "run/pipeline.h"
#include "store/run_summary.h"

namespace tv {

class JsonlSink;

// The run's summary: SummaryOf(outcome, run_row), what samples.jsonl lost
// (`jsonl`; null: none made), then each observer's part.
RunSummary CollectSummary(const RunOutcome& outcome, const Row& run_row, const JsonlSink* jsonl,
                          const RunObservers& observers);

// Writes <run_dir>/summary.json, waiting up to `wait_s` for space on a full
// disk or quota (saying so on stderr); false when it could not.
bool WriteSummaryFile(const std::string& run_dir, const RunSummary& summary, double wait_s);

// Writes report.html into `run_dir` (run --report) and says where unless
// `quiet`. A page the run's owner asked for, not part of the run: a failure is
// one line on stderr and changes nothing else.
void WriteRunReport(const std::string& run_dir, bool quiet);

}  // namespace tv

// The run history's link to run directories: reads a finished run's
// summary.json and meta.json into a RunRecord (its cost computed when the
// summary predates cost accounting) and indexes it in runs.db or a team's
// PostgreSQL (store/run_index.h). Used when a run ends (Session::Finish) and by
// `trainvitals runs import`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "analysis/cost.h"
#include "store/meta_record.h"
#include "store/run_index.h"
#include "store/run_summary.h"

namespace tv {

// The database `db` names (a file or a postgresql:// URL): itself, else
// DefaultRunIndexPath().
std::string RunIndexPath(const std::string& db);

// The record of run directory `dir`: its summary.json and meta.json (absent:
// an empty meta), keyed by its absolute path with symbolic links resolved.
// The summary's "cost", else BuildCost(summary, meta, rates). None with `*why`
// when `dir` holds no usable summary.json ("no summary.json", "summary.json is
// not JSON (...)").
std::optional<RunRecord> ReadRunDir(const std::string& dir, const CostRates& rates,
                                    std::string* why);

// Indexes the run that just wrote `summary` (and `meta`) into `run_dir`, in the
// database at `db_path`. Never throws and never stops the run: any failure
// (a database that is down included: its connection waits kConnectTimeoutS at
// most) is one stderr line, "trainvitals: run history: <db path, a URL's
// password masked>: <what>; this run is not indexed"; `runs import` brings the
// run in later.
void IndexFinishedRun(const std::string& db_path, const std::string& run_dir,
                      const RunSummary& summary, const MetaRecord& meta, const CostRates& rates);

// --since: Unix seconds of `text`, one of a duration back from `now_t` ("7d",
// "12h", "30m", "45s", "2w"), a date ("2026-11-30": its local midnight) or an
// ISO time ("2026-11-30T14:00", seconds optional, a space for the T allowed;
// local time unless it ends in "Z" or a "+01:00"-like offset). Throws
// ConfigError saying which forms it takes.
double ParseSince(std::string_view text, double now_t);

}  // namespace tv

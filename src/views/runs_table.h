// The run history as a person reads it: `trainvitals runs` (one line per run)
// and `trainvitals runs stats`. Rendered from RunRecord / RunStats only, so
// the text and --json always hold the same numbers.
#pragma once

#include <string>
#include <vector>

#include "store/run_record.h"

namespace tv {

// A table with a header line, one line per run in the given order: start
// (local time), name, duration, GPUs, GPU busy %, GPU-hours held and wasted,
// energy, health, exit. A run whose directory is gone says "missing".
// Unknown values are "-".
std::string FormatRunsTable(const std::vector<RunRecord>& runs);

// The stats text (several lines, ends with a newline).
std::string FormatRunStats(const RunStats& stats);

// `runs stats --by KEY`: one line per group (as ComputeRunStatsBy orders
// them): its runs, GPU-hours held, busy share, GPU-hours wasted, runs under
// 30% busy, energy, and its most common finding. Runs that do not know the
// key are "(unknown)".
std::string FormatGroupStats(std::string_view key, const std::vector<RunGroupStats>& groups);

}  // namespace tv

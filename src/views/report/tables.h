// The report's tables of a run: epochs, phases, findings with their advice,
// alerts, and cost (summary.json "cost", as the run wrote it: never computed
// here). A table with nothing to show is left out. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "views/report/run_data.h"

namespace tv {

// The tables of `a`, then those of `b` (may be null) under its own heading.
std::string RunTables(const ReportRun& a, const ReportRun* b);

// The tables of a job of several nodes: its health (its lowest node's), its
// findings and summed cost, then each node's epochs, phases, alerts and cost
// under the node's name.
std::string JobTables(const std::vector<ReportRun>& runs, const ReportJob& job);

// "512 J", "3.4 Wh", "12.1 kWh".
std::string FormatEnergy(double joules);

}  // namespace tv

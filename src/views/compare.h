// `trainvitals compare`: the headline figures of two or more runs side by
// side, with each one's change against the first run, and their epochs
// matched by number where the runs have epochs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tv {

struct ComparedRun {
  std::string label;               // the run directory's name
  nlohmann::ordered_json summary;  // summary.json, with its "cost"
};

// {"runs": [{label, run_dir}], "figures": [{key, what, unit, values[],
// changes[]}], "epochs": [{epoch, duration_s[], steps_per_second[],
// energy_kwh[], loss[]}]}. A change is relative to the first run's value
// ((b - a) / a), in points for shares (b - a); null where either is unknown.
// `values` of a figure no run has are left out.
nlohmann::ordered_json CompareRuns(const std::vector<ComparedRun>& runs);

// The comparison as a terminal table ("steps/s   120.3   162.4 +35%").
std::string FormatComparison(const nlohmann::ordered_json& comparison);

}  // namespace tv

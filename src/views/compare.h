// `trainvitals compare`: the headline figures of two or more runs side by
// side, with each one's change against the first run, and their epochs
// matched by number where the runs have epochs.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tv {

struct ComparedRun {
  std::string label;               // the run's name (RunLabel), else its directory's
  nlohmann::ordered_json summary;  // summary.json, with its "cost"
  std::optional<double> start_t;   // meta.json's, to tell runs of one name apart
};

// {"runs": [{label, run_dir}], "figures": [{key, what, unit, values[],
// changes[]}], "epochs": [{epoch, duration_s[], steps_per_second[],
// energy_kwh[], loss[]}]}. Labels are the runs' names, made unique with
// their start time ("train.py (14:27:03)") where two share one. A change is
// relative to the first run's value ((b - a) / a), in points for shares and
// the health score (b - a); null where either is unknown, or for money in
// two currencies. The money figure carries each run's "currencies" (null
// without money). `values` of a figure no run has are left out.
nlohmann::ordered_json CompareRuns(const std::vector<ComparedRun>& runs);

// The change from `a` to `b` relative to `a`, rounded as the comparison's
// changes are; null when either is not a number or `a` is 0.
nlohmann::ordered_json RelativeChange(const nlohmann::ordered_json& a,
                                      const nlohmann::ordered_json& b);

// The comparison as a terminal table (compare_text.cc) ("steps/s   120.3   162.4 +35%"): each
// row in one unit, chosen by its largest value (all GPU-min, all GiB), money
// with its currency; a label too long for its column is shortened there and
// said whole above the table.
std::string FormatComparison(const nlohmann::ordered_json& comparison);

}  // namespace tv

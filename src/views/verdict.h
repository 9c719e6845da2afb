// The verdict in words: the health score with its breakdown and the findings,
// the worst first, with their advice. Rendered from summary.json's `health` and
// `findings` (or `trainvitals analyze --json`), so text and JSON agree.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "store/finding_record.h"

namespace tv {

// Lines of the end-of-run summary and of `trainvitals analyze`, indented by
// two spaces; empty when there is nothing to say.
std::string FormatVerdict(const nlohmann::ordered_json& health,
                          const nlohmann::ordered_json& findings);

// "  Time     productive steps 62%, start-up 5%, ...": where the run's time went
// (health.goodput), in whole percents that add up to 100; empty without step
// markers unless GPUs were held idle.
std::string FormatTimeSpent(const nlohmann::ordered_json& health);
// The same words without the label and line: "productive steps 62%, ...".
std::string TimeSpentWords(const nlohmann::json& health);
// "input-bound (needs 20 steps ...); ...": the rules not judged yet
// (health.not_judged); empty when every rule that applies has judged.
std::string FormatNotJudged(const nlohmann::ordered_json& health);

// The summary's "Growth" lines from the analysis's memory trends (summary.json
// "memory_trends"): each leak with its rate, then the figures without one.
std::string FormatMemoryTrends(const nlohmann::ordered_json& trends);

// The one stderr line said when a finding opens (from its finding_open event).
std::string FormatFindingLine(const FindingRecord& finding);

}  // namespace tv

// The verdict in words: the health score with its breakdown and the findings,
// the worst first, with their advice. Rendered from the records summary.json's
// `health` and `findings` hold (and `trainvitals analyze --json` prints), so
// text and JSON agree.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "store/finding_record.h"
#include "store/health_record.h"
#include "store/memory_trend_record.h"

namespace tv {

// Lines of the end-of-run summary and of `trainvitals analyze`, indented by
// two spaces; empty when there is nothing to say.
// `unread`: why findings were left out of `findings` (a summary's that could
// not be read), said under them.
std::string FormatVerdict(const HealthRecord& health, const std::vector<FindingRecord>& findings,
                          const Status& unread = Status::Ok());

// "  Time     productive steps 62%, start-up 5%, ...": where the run's time went
// (health.goodput), in whole percents that add up to 100; empty without step
// markers unless GPUs were held idle.
std::string FormatTimeSpent(const HealthRecord& health);
// The same words without the label and line: "productive steps 62%, ...".
std::string TimeSpentWords(const HealthRecord& health);
// "input-bound (needs 20 steps ...); ...": the rules not judged yet
// (health.not_judged); empty when every rule that applies has judged.
std::string FormatNotJudged(const HealthRecord& health);

// The summary's "Growth" lines from the analysis's memory trends (summary.json
// "memory_trends"): each leak with its rate, then the figures without one.
std::string FormatMemoryTrends(const std::vector<MemoryTrendRecord>& trends);

// The one stderr line said when a finding opens (from its finding_open event).
std::string FormatFindingLine(const FindingRecord& finding);

}  // namespace tv

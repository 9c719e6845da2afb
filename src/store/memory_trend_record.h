// MemoryTrendRecord: how one memory figure moved over the run, as
// summary.json's `memory_trends` holds it (docs/schema.md "summary.json",
// docs/findings.md "Memory leaks and the OOM forecast"): whom it is about, which figure, how many
// floors (lowest points per epoch or per window) were fitted, the growth and
// the confidence in it, and the verdict. The leak findings carry the same
// figures as their evidence. This file alone knows the keys: the analysis
// fills the records, MemoryTrendsJson writes them, and the summary text and
// `analyze` read them back with MemoryTrendsFromJson.
//
// Reading is lenient, as every view reads a summary: a trend that is not an
// object is left out, a key of another type leaves its field unset, and the
// first such is named in the Status; the rest is read.
//
// Thread-safe: plain data and pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/finding_record.h"

namespace tv {

struct MemoryTrendRecord {
  FindingSubject subject;  // {"memory": "job"}, {"gpu": N}, {"rank": N, "pid": P}
  std::string figure;      // the row figure: "job.memory_bytes", "gpus[].job_memory_bytes", ...
  int64_t floors = 0;      // floors fitted
  bool floors_by_epoch = false;  // one floor per epoch, else per window
  // With enough floors only:
  std::optional<double> growth_bytes_per_hour;
  std::optional<double> growth_bytes_per_epoch;  // floors by epoch
  std::optional<double> confidence;              // 0..1, that the growth is real
  std::string verdict;                           // "leak", "no leak", "not enough evidence yet"
};

// The figures after the subject and figure (floors, floors_by, growth,
// confidence, verdict), as a leak finding's evidence holds them.
nlohmann::ordered_json MemoryTrendFiguresJson(const MemoryTrendRecord& trend);
// `memory_trends` as summary.json holds it: each trend's subject and figure,
// then its figures.
nlohmann::ordered_json MemoryTrendsJson(const std::vector<MemoryTrendRecord>& trends);

Status MemoryTrendsFromJson(const nlohmann::json& array, std::vector<MemoryTrendRecord>* out);
Status MemoryTrendsFromJson(const nlohmann::ordered_json& array,
                            std::vector<MemoryTrendRecord>* out);
// The summary's `memory_trends` (none when it has none).
Status MemoryTrendsFromSummary(const nlohmann::json& summary, std::vector<MemoryTrendRecord>* out);
Status MemoryTrendsFromSummary(const nlohmann::ordered_json& summary,
                               std::vector<MemoryTrendRecord>* out);

}  // namespace tv

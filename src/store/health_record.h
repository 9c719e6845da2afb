// HealthRecord: the run's verdict in numbers, as summary.json's `health` holds
// it (docs/schema.md "summary.json", docs/findings.md "Health score"): the
// score and what took its points, or the note saying why there is none; where
// the time went (goodput); the rules not judged yet; and the same per epoch.
// This file alone knows its keys: the analysis fills a HealthRecord and
// HealthJson writes it; the summary text, the report, `analyze`, the run
// history's headline and the cost read it back with HealthFromJson.
//
// HealthFromJson is lenient, as every view reads a summary: a key that is
// absent, null or of another type leaves its field unset (the first of another
// type is named in the Status); the rest is read. Keys it does not know are
// left out.
//
// Thread-safe: plain data and pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/time_spent.h"

namespace tv {

// Where a span's wall time went, by category (core/time_spent.h).
struct GoodputRecord {
  double wall_s = 0;
  std::optional<double> productive_ratio;  // only with step markers
  std::array<double, kSpentCount> seconds{};
  std::array<double, kSpentCount> ratios{};
  std::array<int, kSpentCount> percent{};  // whole percents that add up to 100

  double Seconds(Spent s) const { return seconds[static_cast<size_t>(s)]; }
  double Ratio(Spent s) const { return ratios[static_cast<size_t>(s)]; }
  int Percent(Spent s) const { return percent[static_cast<size_t>(s)]; }
};

struct HealthRecord {
  std::string note;             // why there is no score ("not judged: ...")
  std::optional<double> score;  // 0..100, when the run was judged
  struct Deduction {
    std::string what;  // "waiting for input 30% of the time (input-bound)"
    int points = 0;    // negative: taken off
  };
  std::vector<Deduction> breakdown;
  std::optional<double> gpu_busy_ratio;  // the job's GPUs, over the judged time
  std::optional<GoodputRecord> goodput;
  struct Waiting {
    std::string id;     // the finding's id
    std::string needs;  // what it needs to judge: "5 min of training after ..."
  };
  std::vector<Waiting> not_judged;
  struct Epoch {
    int64_t epoch = 0;
    double score = 0;
    std::optional<GoodputRecord> goodput;
  };
  std::vector<Epoch> epochs;
};

nlohmann::ordered_json GoodputJson(const GoodputRecord& goodput);
// `health` as summary.json holds it, its keys in that order.
nlohmann::ordered_json HealthJson(const HealthRecord& health);

Status HealthFromJson(const nlohmann::json& j, HealthRecord* out);
Status HealthFromJson(const nlohmann::ordered_json& j, HealthRecord* out);
// The summary's `health` (an empty record when it has none).
Status HealthFromSummary(const nlohmann::json& summary, HealthRecord* out);
Status HealthFromSummary(const nlohmann::ordered_json& summary, HealthRecord* out);

}  // namespace tv

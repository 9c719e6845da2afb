// How findings write numbers in their messages and evidence.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "analysis/findings/frame.h"
#include "analysis/round.h"

namespace tv {

// "GPU 1", or the name a join gave it (frame.h).
inline std::string GpuWords(const GpuFrame& gpu) {
  return gpu.name.empty() ? fmt::format("GPU {}", gpu.index) : gpu.name;
}
// "Rank 2", or the name a join gave it (frame.h).
inline std::string RankWords(const RankFrame& rank) {
  return rank.name.empty() ? fmt::format("Rank {}", rank.rank) : rank.name;
}
// "34%" for 0.34.
inline std::string Pct(double ratio) { return fmt::format("{:.0f}%", ratio * 100); }
// "45 s", "12 min", "3.5 h": a span of time as a person says it.
inline std::string Span(double seconds) {
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 2 * 3600) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}
// A test's confidence, 1 - p: "99.6%", ">99.9%".
inline std::string ConfidenceText(double p_value) {
  if (p_value < 0.001) return ">99.9%";
  return fmt::format("{:.1f}%", (1 - p_value) * 100);
}
// A ratio or rate as evidence: 4 decimals, as samples.jsonl writes them.
inline double Round4(double v) { return RoundTo(v, 1e4); }
// Evidence's `key` = `v`, only when it is known.
inline void PutIfSet(nlohmann::ordered_json* j, const char* key, const std::optional<double>& v) {
  if (v) (*j)[key] = *v;
}

}  // namespace tv

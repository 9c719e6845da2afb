// Severity: how bad a finding is, from the analysis that judges it to the
// records and views that read it back. Its names are what summary.json and
// events.jsonl write. Thread-safe (pure functions).
#pragma once

#include <optional>
#include <string_view>

namespace tv {

// Ordered: a worse severity compares greater.
enum class Severity { kInfo, kWarning, kCritical };

std::string_view SeverityName(Severity s);  // "info", "warning", "critical"
// The severity `name` names; nullopt for any other text.
std::optional<Severity> ParseSeverity(std::string_view name);

}  // namespace tv

// Reading alert rules: the built-in ones, then the [[alert]] tables of the
// config file and of --alerts files, in that order. A table whose name is a
// built-in rule's tunes it (its keys replace the built-in's; enabled = false
// turns it off); any other name adds a rule. A wrong rule is a ConfigError
// naming its file, line and key and saying what was expected.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/alerts/rule.h"
#include "core/config.h"

namespace tv {

// The built-in rules as TOML [[alert]] tables (docs/alerts.md shows them).
std::string_view BuiltinAlertsToml();
// The same as a Markdown TOML block, for docs/alerts.md.
std::string BuiltinAlertsMarkdown();

// The rules of a run: the built-in ones unless config.builtin_alerts is false,
// tuned and extended by config.alert_files. Throws ConfigError.
std::shared_ptr<const std::vector<AlertRule>> LoadAlertRules(const Config& config);

// Parses one alert expression ("mean(gpus[].util_ratio[10m]) < 20%"); throws
// ConfigError saying at which character what was expected.
AlertExpr ParseAlertExpr(std::string_view text);

// A metric by the name rules use ("host.memory_used_bytes",
// "gpus[].util_ratio", "gpus[].memory_used_bytes_max"); nullopt when unknown.
std::optional<MetricRef> ResolveMetricName(std::string_view name);
// The metric name nearest `name` (a typo), empty when none is near.
std::string NearestMetric(std::string_view name);

// A duration: "90s", "10m", "1h30m", "250ms", or a number of seconds. Throws
// ConfigError.
double ParseDuration(std::string_view text);

}  // namespace tv

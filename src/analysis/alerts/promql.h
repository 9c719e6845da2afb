// The alert rules as Prometheus alerting rules over our metric names, for
// clusters that evaluate them in Prometheus (deploy/prometheus/alerts.yml,
// generated from the built-in rules by `make docs`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/alerts/rule.h"

namespace tv {

// `rule`'s expression in PromQL; nullopt for what PromQL cannot say the same
// way (a finding rule, a row peak `_max`, a window of samples).
std::optional<std::string> PromqlOf(const AlertRule& rule);

// A Prometheus rule file (one group, "trainvitals") of the rules PromqlOf can say.
std::string PrometheusRulesYaml(const std::vector<AlertRule>& rules);

}  // namespace tv

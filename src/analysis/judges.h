// The judges of a run: the findings thresholds, the alert rules and the cost
// rates it was judged with, as meta.json records them (docs/schema.md
// "meta.json"), so that `analyze` and `report` reach the run's own verdict
// without being given its config again. Every threshold's value is recorded,
// not only the ones a config changed: the table's defaults move between
// versions, and a run judged under old defaults must replay under them.
//
// Pure functions, except ReadRunJudges (reads meta.json). Thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "analysis/alerts/rule.h"
#include "analysis/cost.h"
#include "analysis/findings/table.h"

namespace tv {

// meta.json "thresholds": {key: value} for every threshold of the table, in
// its order.
nlohmann::ordered_json ThresholdsJson(const Thresholds& thresholds);
// meta.json "cost_rates": {pue, grid_g_per_kwh, kwh_price (with a price),
// currency, gpu_hour_price {model: price}}.
nlohmann::ordered_json CostRatesJson(const CostRates& rates);
// meta.json "alert_rules": [{name, expr, for_s, keep_firing_for_s, repeat_s,
// severity, all_gpus, builtin, where, actions: ["command", "webhook", ...]}].
// What the actions deliver to (commands, URLs that may hold tokens) is not
// written: meta.json can be shared.
nlohmann::ordered_json AlertRulesJson(const std::vector<AlertRule>& rules);

struct RunJudges {
  std::optional<Thresholds> thresholds;  // none: a run written before runs kept them
  std::optional<CostRates> cost_rates;   // likewise
  std::optional<size_t> alert_rules;     // how many rules the run had, when recorded
  // Thresholds the run recorded that this version does not know (left out),
  // and ones of this version the run did not record (the table's value used).
  std::vector<std::string> notes;
};

// The judges of `meta` (meta.json, read from `meta_path`, named in errors).
// Throws std::runtime_error naming the file and key of a value that cannot be
// used ("RUN/meta.json: key thresholds.input_bound_ratio: expected a number >=
// 0, got \"high\"").
RunJudges JudgesFromMeta(const nlohmann::json& meta, const std::string& meta_path);
// The same from RUN_DIR/meta.json; none recorded when it cannot be read (absent,
// empty, no regular file, no JSON: the other readers of meta.json say it was
// left out). Throws std::runtime_error when judges it holds cannot be used.
RunJudges ReadRunJudges(const std::string& run_dir);

// A threshold judged at another value than the run's own.
struct ThresholdChange {
  std::string key;
  double value = 0;      // the one judged with
  double run_value = 0;  // the run's own
};
std::vector<ThresholdChange> ChangedThresholds(const Thresholds& run, const Thresholds& used);
// "input_bound_ratio 0.5 (the run used 0.2), window_s 30 (the run used 60)";
// "the run's own thresholds" when none changed.
std::string DescribeChanges(const std::vector<ThresholdChange>& changes);
nlohmann::ordered_json ChangesJson(const std::vector<ThresholdChange>& changes);

// Which thresholds judge a run after the fact (`analyze`, `report`): the
// run's own (meta.json) unless a config file is given with --config, else
// (a run from before runs kept them) those of `config` as before.
struct ThresholdChoice {
  Thresholds thresholds;
  std::string source;                    // "run", "config", "defaults"
  std::string config_file;               // with source "config"
  std::vector<ThresholdChange> changed;  // against the run's own, with --config
  bool compared = false;                 // the run's own were known to compare with
  std::vector<std::string> notes;        // RunJudges::notes
};
// `config_flag`: the --config given on the command line (empty: none);
// `config`: the config read (from it, else $TRAINVITALS_CONFIG). Throws
// ConfigError for a wrong [findings] entry, std::runtime_error for meta.json.
ThresholdChoice ChooseThresholds(const RunJudges& judges, const std::string& config_flag,
                                 const Config& config);
// The stderr line of a choice made with --config: "judged with --config
// x.toml: input_bound_ratio 0.5 (the run used 0.2)"; empty otherwise.
std::string JudgedWithLine(const ThresholdChoice& choice);
// analyze --json "thresholds": {source, config, changed: [{key, value, run_value}]}.
nlohmann::ordered_json ChoiceJson(const ThresholdChoice& choice);

}  // namespace tv

#include "analysis/judges.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "core/json_shape.h"
#include "core/run_file.h"

namespace tv {
namespace {

using OJson = nlohmann::ordered_json;

// What JudgesFromMeta relies on; the values are checked after.
constexpr auto kJudgesShape = std::to_array<JsonRule>({
    {"thresholds", kJsonObject},
    {"thresholds.*", kJsonNumber},
    {"cost_rates", kJsonObject},
    {"cost_rates.pue", kJsonNumber},
    {"cost_rates.grid_g_per_kwh", kJsonNumber},
    {"cost_rates.kwh_price", kJsonNumber},
    {"cost_rates.currency", kJsonString},
    {"cost_rates.gpu_hour_price", kJsonObject},
    {"cost_rates.gpu_hour_price.*", kJsonNumber},
    {"alert_rules", kJsonArray},
    {"alert_rules[]", kJsonObject},
});

[[noreturn]] void Refuse(const std::string& meta_path, const std::string& key,
                         const std::string& what, const nlohmann::json& got) {
  throw std::runtime_error(
      fmt::format("{}: key {}: expected {}, got {}", meta_path, key, what, got.dump()));
}

// The number at cost_rates.`key`, within [low, high] (the ranges the [cost]
// table takes, src/analysis/cost_rates.cc).
double Rate(const nlohmann::json& rates, const std::string& meta_path, const std::string& key,
            double low, double high, double fallback) {
  auto it = rates.find(key);
  if (it == rates.end()) return fallback;
  double v = it->get<double>();
  if (!(v >= low && v <= high)) {
    Refuse(meta_path, "cost_rates." + key, fmt::format("a number from {:g} to {:g}", low, high),
           *it);
  }
  return v;
}

std::string Number(double v) { return fmt::format("{:g}", v); }

}  // namespace

OJson ThresholdsJson(const Thresholds& thresholds) {
  OJson out = OJson::object();
  for (const ThresholdDef& t : ThresholdDefs()) out[std::string(t.key)] = thresholds[t.id];
  return out;
}

OJson CostRatesJson(const CostRates& rates) {
  OJson out = {{"pue", rates.pue}, {"grid_g_per_kwh", rates.grid_g_per_kwh}};
  if (rates.kwh_price) out["kwh_price"] = *rates.kwh_price;
  out["currency"] = rates.currency;
  out["gpu_hour_price"] = OJson::object();
  for (const auto& [model, price] : rates.gpu_hour_price) out["gpu_hour_price"][model] = price;
  return out;
}

OJson AlertRulesJson(const std::vector<AlertRule>& rules) {
  OJson out = OJson::array();
  for (const AlertRule& r : rules) {
    OJson actions = OJson::array();
    if (!r.actions.command.empty()) actions.push_back("command");
    if (!r.actions.webhook.empty()) actions.push_back("webhook");
    if (!r.actions.alertmanager.empty()) actions.push_back("alertmanager");
    if (r.actions.signal != 0) actions.push_back("signal");
    if (r.actions.stop) actions.push_back("stop");
    out.push_back({{"name", r.name},
                   {"expr", r.expr.text},
                   {"for_s", r.for_s},
                   {"keep_firing_for_s", r.keep_firing_for_s},
                   {"repeat_s", r.repeat_s},
                   {"severity", r.severity},
                   {"all_gpus", r.all_gpus},
                   {"builtin", r.builtin},
                   {"where", r.where},
                   {"actions", std::move(actions)}});
  }
  return out;
}

RunJudges JudgesFromMeta(const nlohmann::json& meta, const std::string& meta_path) {
  RunJudges j;
  if (!meta.is_object()) return j;
  if (std::string e = JsonShapeError(meta, kJudgesShape); !e.empty()) {
    throw std::runtime_error(fmt::format("{}: {}", meta_path, e));
  }
  if (auto it = meta.find("thresholds"); it != meta.end()) {
    Thresholds th;
    for (const auto& [key, value] : it->items()) {
      if (FindThreshold(key) == nullptr) {
        j.notes.push_back(
            fmt::format("{}: threshold {} is not one of this version's; left out", meta_path, key));
        continue;
      }
      if (!th.Set(key, value.get<double>()).empty()) {
        Refuse(meta_path, "thresholds." + key, "a number >= 0", value);
      }
    }
    std::vector<std::string> missing;
    for (const ThresholdDef& t : ThresholdDefs()) {
      if (!it->contains(std::string(t.key))) missing.emplace_back(t.key);
    }
    if (!missing.empty()) {
      std::string keys;
      for (const std::string& k : missing) keys += (keys.empty() ? "" : ", ") + k;
      j.notes.push_back(fmt::format(
          "{}: the run recorded no {} (newer than the run): this version's default used", meta_path,
          keys));
    }
    j.thresholds = th;
  }
  if (auto it = meta.find("cost_rates"); it != meta.end()) {
    const nlohmann::json& r = *it;
    CostRates rates;
    rates.pue = Rate(r, meta_path, "pue", 1, 5, rates.pue);
    rates.grid_g_per_kwh = Rate(r, meta_path, "grid_g_per_kwh", 0, 5000, rates.grid_g_per_kwh);
    if (r.contains("kwh_price")) rates.kwh_price = Rate(r, meta_path, "kwh_price", 0, 1e6, 0);
    if (auto c = r.find("currency"); c != r.end()) {
      std::string currency = c->get<std::string>();
      if (currency.empty() || currency.size() > 8) {
        Refuse(meta_path, "cost_rates.currency", "a short currency name (\"USD\")", *c);
      }
      rates.currency = currency;
    }
    if (auto prices = r.find("gpu_hour_price"); prices != r.end()) {
      for (const auto& [model, price] : prices->items()) {
        double v = price.get<double>();
        if (!(v >= 0 && v <= 1e6)) {
          Refuse(meta_path, "cost_rates.gpu_hour_price." + model, "a price from 0 to 1e+06", price);
        }
        rates.gpu_hour_price[model] = v;
      }
    }
    j.cost_rates = std::move(rates);
  }
  if (auto it = meta.find("alert_rules"); it != meta.end()) j.alert_rules = it->size();
  return j;
}

RunJudges ReadRunJudges(const std::string& run_dir) {
  std::string path = (std::filesystem::path(run_dir) / "meta.json").string();
  nlohmann::json meta;
  // meta.json only adds to a run: one that cannot be read (missing, empty as
  // a run just starting has it, no regular file, no JSON) is a run without
  // judges, and the readers of the rest of meta.json say it was left out.
  // Judges it holds but wrongly are an error (JudgesFromMeta).
  if (!ReadJsonDocument(path, &meta).ok()) return {};
  return JudgesFromMeta(meta, path);
}

std::vector<ThresholdChange> ChangedThresholds(const Thresholds& run, const Thresholds& used) {
  std::vector<ThresholdChange> out;
  for (const ThresholdDef& t : ThresholdDefs()) {
    if (run[t.id] != used[t.id]) out.push_back({std::string(t.key), used[t.id], run[t.id]});
  }
  return out;
}

std::string DescribeChanges(const std::vector<ThresholdChange>& changes) {
  if (changes.empty()) return "the run's own thresholds";
  std::string out;
  for (const ThresholdChange& c : changes) {
    out += fmt::format("{}{} {} (the run used {})", out.empty() ? "" : ", ", c.key, Number(c.value),
                       Number(c.run_value));
  }
  return out;
}

OJson ChangesJson(const std::vector<ThresholdChange>& changes) {
  OJson out = OJson::array();
  for (const ThresholdChange& c : changes) {
    out.push_back({{"key", c.key}, {"value", c.value}, {"run_value", c.run_value}});
  }
  return out;
}

ThresholdChoice ChooseThresholds(const RunJudges& judges, const std::string& config_flag,
                                 const Config& config) {
  ThresholdChoice c;
  c.notes = judges.notes;
  if (judges.thresholds && config_flag.empty()) {
    c.thresholds = *judges.thresholds;
    c.source = "run";
    return c;
  }
  c.thresholds = ThresholdsFrom(config.findings);
  c.source = config.findings.empty() ? "defaults" : "config";
  if (!config_flag.empty()) {
    c.source = "config";
    c.config_file = config_flag;
  }
  if (judges.thresholds && !config_flag.empty()) {
    c.compared = true;
    c.changed = ChangedThresholds(*judges.thresholds, c.thresholds);
  }
  return c;
}

std::string JudgedWithLine(const ThresholdChoice& choice) {
  if (choice.config_file.empty()) return "";
  if (!choice.compared) {
    return fmt::format("judged with --config {} (the run recorded no thresholds to compare with)",
                       choice.config_file);
  }
  return fmt::format("judged with --config {}: {}", choice.config_file,
                     DescribeChanges(choice.changed));
}

OJson ChoiceJson(const ThresholdChoice& choice) {
  OJson out = {{"source", choice.source}};
  if (!choice.config_file.empty()) out["config"] = choice.config_file;
  if (choice.compared) out["changed"] = ChangesJson(choice.changed);
  return out;
}

}  // namespace tv

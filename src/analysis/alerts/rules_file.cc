#include "analysis/alerts/rules_file.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <csignal>

#include "analysis/alerts/action_url.h"
#include "analysis/findings/table.h"
#include "core/near.h"

namespace tv {
namespace {

// The rules our users asked for (docs/alerts.md); a table of the same name in
// a config file tunes one, `enabled = false` turns it off.
constexpr std::string_view kBuiltinToml = R"toml(
[[alert]]
name = "gpu-low-util"
expr = "gpus[].util_ratio < 20%"
for = "10m"
summary = "GPU {gpu} has been under 20 % busy for 10 min ({value} now): a job that waits or hangs holds it"

[[alert]]
name = "gpu-memory-full"
expr = "(gpus[].allocator_allocated_bytes or gpus[].memory_used_bytes) / gpus[].memory_total_bytes > 95%"
for = "1m"
summary = "GPU {gpu} memory is {value} full (the framework's allocations where it reports them): close to CUDA out of memory"

[[alert]]
name = "gpu-hot"
expr = "gpus[].temperature_celsius > 85"
for = "5m"
summary = "GPU {gpu} has been above 85 °C for 5 min ({value} now): check its cooling"

[[alert]]
name = "gpu-throttled"
expr = "mean(gpus[].throttle_thermal_ratio[5m]) > 25%"
summary = "GPU {gpu} was held down by heat {value} of the last 5 min: it runs below its clocks"

[[alert]]
name = "job-memory-near-limit"
expr = "job.memory_util_ratio > 90%"
for = "1m"
summary = "The job uses {value} of the memory it may use (the cgroup limit, else the host's): close to being killed"

[[alert]]
name = "run-dir-disk-full"
expr = "host.run_dir_free_bytes / host.run_dir_size_bytes < 5%"
for = "1m"
summary = "The run directory's disk has {value} free: the records, and checkpoints beside them, are about to fail"
)toml";

constexpr std::string_view kRuleKeys[] = {
    "name",    "expr",     "finding",         "for",     "keep_firing_for",
    "repeat",  "severity", "summary",         "labels",  "all_gpus",
    "enabled", "command",  "command_timeout", "webhook", "alertmanager",
    "signal",  "stop"};

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

// Reads one [[alert]] table's keys onto `rule`.
class TableReader {
 public:
  TableReader(std::string file, const toml::table& table) : file_(std::move(file)), table_(table) {}

  void Apply(AlertRule* rule, bool* enabled) {
    for (const auto& [k, node] : table_) {
      std::string_view key = k.str();
      line_ = static_cast<int>(node.source().begin.line);
      key_ = key;
      if (std::find(std::begin(kRuleKeys), std::end(kRuleKeys), key) == std::end(kRuleKeys)) {
        std::string_view near = NearestWord(key, kRuleKeys);
        Fail(fmt::format("unknown key{}; an [[alert]] table has {}",
                         near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near),
                         fmt::join(kRuleKeys, ", ")));
      }
      if (key == "name") continue;
      if (key == "enabled") {
        *enabled = Bool(node);
      } else if (key == "expr") {
        try {
          rule->expr = ParseAlertExpr(Text(node));
        } catch (const ConfigError& e) {
          Fail(e.what());
        }
      } else if (key == "finding") {
        std::string id = Text(node);
        bool known = false;
        for (const FindingDef& d : FindingDefs()) known |= d.name == id;
        if (!known) Fail(fmt::format("'{}' is not a finding id (docs/findings.md lists them)", id));
        rule->expr = AlertExpr{};
        rule->expr.finding = id;
        rule->expr.text = "finding " + id;
      } else if (key == "for") {
        rule->for_s = Duration(node);
      } else if (key == "keep_firing_for") {
        rule->keep_firing_for_s = Duration(node);
      } else if (key == "repeat") {
        rule->repeat_s = Duration(node);
      } else if (key == "severity") {
        rule->severity = Text(node);
        if (rule->severity != "info" && rule->severity != "warning" &&
            rule->severity != "critical") {
          Fail("expected \"info\", \"warning\" or \"critical\"");
        }
      } else if (key == "summary") {
        rule->summary = Text(node);
      } else if (key == "labels") {
        Labels(node, rule);
      } else if (key == "all_gpus") {
        rule->all_gpus = Bool(node);
      } else if (key == "command") {
        rule->actions.command = Argv(node);
      } else if (key == "command_timeout") {
        rule->actions.command_timeout_s = Duration(node);
        if (rule->actions.command_timeout_s <= 0) Fail("expected a duration longer than 0 s");
      } else if (key == "webhook") {
        rule->actions.webhook = Url(node);
      } else if (key == "alertmanager") {
        rule->actions.alertmanager = Url(node);
      } else if (key == "signal") {
        std::string s = Text(node);
        if (s == "SIGTERM" || s == "TERM") {
          rule->actions.signal = SIGTERM;
        } else if (s == "SIGINT" || s == "INT") {
          rule->actions.signal = SIGINT;
        } else {
          Fail("expected \"SIGINT\" or \"SIGTERM\"");
        }
      } else if (key == "stop") {
        rule->actions.stop = Bool(node);
      }
    }
  }

  [[noreturn]] void Fail(std::string_view what) const {
    throw ConfigError(fmt::format("{}:{}: alert.{}: {}", file_, line_, key_, what));
  }

 private:
  std::string Text(const toml::node& node) const {
    std::optional<std::string> s = node.value<std::string>();
    if (!s) Fail("expected a string in quotes");
    return *s;
  }
  bool Bool(const toml::node& node) const {
    if (!node.is_boolean()) Fail("expected true or false");
    return *node.value<bool>();
  }
  double Duration(const toml::node& node) const {
    if (node.is_integer() || node.is_floating_point()) {
      double v = *node.value<double>();
      if (v < 0) Fail("expected a duration of 0 s or more");
      return v;
    }
    try {
      return ParseDuration(Text(node));
    } catch (const ConfigError& e) {
      Fail(e.what());
    }
  }
  std::string Url(const toml::node& node) const {
    std::string url = Text(node);
    if (std::string why = CheckActionUrl(url); !why.empty()) Fail(why);
    return url;
  }
  std::vector<std::string> Argv(const toml::node& node) const {
    const toml::array* arr = node.as_array();
    if (arr == nullptr || arr->empty()) {
      Fail("expected the command as a list of strings, e.g. [\"/usr/bin/mail\", \"-s\", \"x\"]");
    }
    std::vector<std::string> argv;
    for (const toml::node& item : *arr) {
      std::optional<std::string> s = item.value<std::string>();
      if (!s) Fail("every item of the command must be a string");
      argv.push_back(*s);
    }
    if (argv[0].empty()) Fail("the command's program is empty");
    return argv;
  }
  void Labels(const toml::node& node, AlertRule* rule) const {
    const toml::table* t = node.as_table();
    if (t == nullptr) Fail("expected a table of strings, e.g. { team = \"vision\" }");
    rule->labels.clear();
    for (const auto& [name, value] : *t) {
      std::optional<std::string> s = value.value<std::string>();
      if (!s) Fail(fmt::format("label '{}': expected a string", name.str()));
      rule->labels.emplace_back(std::string(name.str()), *s);
    }
  }

  std::string file_;
  const toml::table& table_;
  int line_ = 0;
  std::string_view key_;
};

// Applies the [[alert]] tables of `root` (from `file`) to `rules`.
// "; the rules so far: a, b" for an error about a name.
std::string BuiltinNames(const std::vector<AlertRule>& rules) {
  std::vector<std::string_view> names;
  names.reserve(rules.size());
  for (const AlertRule& r : rules) names.push_back(r.name);
  return names.empty() ? "" : fmt::format("; the rules so far: {}", fmt::join(names, ", "));
}

void ApplyTables(const toml::table& root, const std::string& file, bool builtin,
                 std::vector<AlertRule>* rules) {
  const toml::node* alerts = root.get("alert");
  if (alerts == nullptr) return;
  const toml::array* arr = alerts->as_array();
  if (arr == nullptr || !arr->is_array_of_tables()) {
    throw ConfigError(fmt::format("{}:{}: alert: expected [[alert]] tables (docs/alerts.md)", file,
                                  alerts->source().begin.line));
  }
  std::vector<std::string> seen_here;
  for (const toml::node& item : *arr) {
    const toml::table& table = *item.as_table();
    int line = static_cast<int>(table.source().begin.line);
    std::optional<std::string> name =
        table.get("name") ? table.get("name")->value<std::string>() : std::nullopt;
    if (!name || !ValidName(*name)) {
      throw ConfigError(fmt::format(
          "{}:{}: alert.name: every [[alert]] needs a name of letters, digits, '_', '.', '-'", file,
          line));
    }
    if (std::find(seen_here.begin(), seen_here.end(), *name) != seen_here.end()) {
      throw ConfigError(
          fmt::format("{}:{}: alert '{}' is defined twice in this file", file, line, *name));
    }
    seen_here.push_back(*name);
    auto existing = std::find_if(rules->begin(), rules->end(),
                                 [&](const AlertRule& r) { return r.name == *name; });
    bool found = existing != rules->end();
    if (table.get("expr") != nullptr && table.get("finding") != nullptr) {
      throw ConfigError(
          fmt::format("{}:{}: alert '{}': give expr or finding, not both", file, line, *name));
    }
    AlertRule rule = found ? *existing : AlertRule{};
    rule.name = *name;
    rule.builtin = builtin || (found && existing->builtin);
    rule.where = builtin ? "built-in" : fmt::format("{}:{}", file, line);
    bool enabled = true;
    TableReader reader(file, table);
    reader.Apply(&rule, &enabled);
    if (!enabled) {
      if (!found) {
        throw ConfigError(fmt::format("{}:{}: there is no alert '{}' to turn off{}", file, line,
                                      *name, BuiltinNames(*rules)));
      }
      rules->erase(existing);
      continue;
    }
    if (rule.expr.finding.empty() && rule.expr.numerator.alternatives.empty()) {
      throw ConfigError(fmt::format(
          "{}:{}: alert '{}' needs expr = \"...\" (e.g. \"gpus[].util_ratio < 20%\") or "
          "finding = \"<finding id>\"",
          file, line, *name));
    }
    if (existing != rules->end()) {
      *existing = std::move(rule);
    } else {
      rules->push_back(std::move(rule));
    }
  }
}

toml::table ParseToml(std::string_view text, const std::string& file) {
  try {
    return file.empty() ? toml::parse(text) : toml::parse_file(file);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}:{}:{}: {}", file.empty() ? "built-in" : file,
                                  e.source().begin.line, e.source().begin.column, e.description()));
  }
}

}  // namespace

std::string_view BuiltinAlertsToml() { return kBuiltinToml.substr(1); }

std::string BuiltinAlertsMarkdown() { return fmt::format("```toml\n{}```\n", BuiltinAlertsToml()); }

std::shared_ptr<const std::vector<AlertRule>> LoadAlertRules(const Config& config) {
  auto rules = std::make_shared<std::vector<AlertRule>>();
  if (config.builtin_alerts) {
    ApplyTables(ParseToml(kBuiltinToml, ""), "built-in", true, rules.get());
  }
  std::vector<std::string> read;
  for (const std::string& file : config.alert_files) {
    if (std::find(read.begin(), read.end(), file) != read.end()) continue;
    read.push_back(file);
    ApplyTables(ParseToml("", file), file, false, rules.get());
  }
  return rules;
}

}  // namespace tv

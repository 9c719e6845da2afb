#include "core/config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "core/endpoint.h"
#include "core/near.h"

namespace tv {
namespace {

double ParseNumber(std::string_view flag, std::string_view text, double lo, double hi) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
    throw ConfigError(fmt::format("{}: '{}' is not a number", flag, text));
  }
  if (v < lo || v > hi) {
    throw ConfigError(fmt::format("{}: {} is out of range [{}, {}]", flag, text, lo, hi));
  }
  return v;
}

bool ParseBool(std::string_view flag, std::string_view text) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  throw ConfigError(fmt::format("{}: '{}' is not true or false", flag, text));
}

std::vector<int> ParseIntList(std::string_view flag, std::string_view text) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos <= text.size() && !text.empty()) {
    size_t comma = text.find(',', pos);
    std::string_view item =
        text.substr(pos, comma == std::string_view::npos ? text.npos : comma - pos);
    int v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || end != item.data() + item.size() || v < 0) {
      throw ConfigError(fmt::format("{}: '{}' is not a list of GPU indices like 0,1", flag, text));
    }
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

std::string Num(double v) { return fmt::format("{}", v); }

const std::vector<OptionDef> kOptions = {
    {"--sample-hz", "sample_hz", "number",
     "Samples per second. Rows hold the mean and max of the samples in each interval.",
     [](Config& c, std::string_view t) { c.sample_hz = ParseNumber("--sample-hz", t, 0.1, 1000); },
     [](const Config& c) { return Num(c.sample_hz); }},
    {"--interval", "interval", "seconds", "Seconds per row written to samples.jsonl.",
     [](Config& c, std::string_view t) { c.interval_s = ParseNumber("--interval", t, 0.01, 3600); },
     [](const Config& c) { return Num(c.interval_s); }},
    {"--out", "out", "path",
     "Run directory to write. Default: <runs-dir>/<YYYYmmdd-HHMMSS>-<name>.",
     [](Config& c, std::string_view t) { c.out = t; }, [](const Config& c) { return c.out; }},
    {"--runs-dir", "runs_dir", "path", "Where default run directories are made.",
     [](Config& c, std::string_view t) { c.runs_dir = t; },
     [](const Config& c) { return c.runs_dir; }},
    {"--name", "name", "text", "Name of the run. Default: the script or command name.",
     [](Config& c, std::string_view t) { c.name = t; }, [](const Config& c) { return c.name; }},
    {"--job-id", "job_id", "text",
     "The job this run belongs to, the same on every node of a multi-node job: meta.json's "
     "job, `trainvitals runs --job ID` and the `job` label of every Prometheus series. "
     "Default: SLURM_JOB_ID, else TORCHELASTIC_RUN_ID or torchrun's --rdzv-id, else the "
     "rendezvous and the start minute (MASTER_ADDR:MASTER_PORT@YYYY-MM-DDTHH:MMZ, or "
     "torchrun's --rdzv-endpoint or --master-addr and --master-port); none when nothing "
     "names one.",
     [](Config& c, std::string_view t) {
       if (t.empty()) throw ConfigError("--job-id: give the job's id");
       c.job_id = t;
     },
     [](const Config& c) { return c.job_id; }},
    {"--quiet", "quiet", "bool", "No live status line and no summary on stderr.",
     [](Config& c, std::string_view t) { c.quiet = ParseBool("--quiet", t); },
     [](const Config& c) { return std::string(c.quiet ? "true" : "false"); }},
    {"--kill-after", "kill_after", "seconds",
     "run only: when COMMAND has not ended this many seconds after a SIGINT or SIGTERM sent to "
     "trainvitals (or when that signal comes again), SIGKILL its process group and whole tree; "
     "the summary is still written. 0: only when the signal comes again. Keep it under the "
     "scheduler's own grace period (Slurm KillWait, Kubernetes terminationGracePeriodSeconds: "
     "30 s by default).",
     [](Config& c, std::string_view t) {
       c.kill_after_s = ParseNumber("--kill-after", t, 0, 86400);
     },
     [](const Config& c) { return Num(c.kill_after_s); }},
    {"--gpus", "gpus", "list",
     "GPUs to watch, as the job numbers them (CUDA_VISIBLE_DEVICES order), e.g. 0,2. "
     "auto:N (run only): give the job the N freest GPUs no other trainvitals run holds, as "
     "`trainvitals pick` chooses them, and hold them while it runs. Default: all.",
     [](Config& c, std::string_view t) {
       if (t.starts_with("auto:")) {
         std::vector<int> n = ParseIntList("--gpus auto:N", t.substr(5));
         if (n.size() != 1 || n[0] < 1 || n[0] > 64) {
           throw ConfigError(fmt::format("--gpus {}: expected auto:N with N from 1 to 64", t));
         }
         c.gpus.clear();
         c.gpus_auto = n[0];
         return;
       }
       c.gpus = ParseIntList("--gpus", t);
       c.gpus_auto = 0;
     },
     [](const Config& c) {
       if (c.gpus_auto > 0) return fmt::format("auto:{}", c.gpus_auto);
       return fmt::format("{}", fmt::join(c.gpus, ","));
     }},
    {"--gpu-ids", "gpu_ids", "bool",
     "Write GPU UUIDs and serial numbers to meta.json (default: a short stable hash).",
     [](Config& c, std::string_view t) { c.gpu_ids = ParseBool("--gpu-ids", t); },
     [](const Config& c) { return std::string(c.gpu_ids ? "true" : "false"); }},
    {"--prometheus", "prometheus", "address",
     "Serve Prometheus metrics of the latest row at http://ADDR/metrics: PORT (127.0.0.1 only), "
     "HOST:PORT, or :PORT (all interfaces); port 0 picks a free one. Default: off.",
     [](Config& c, std::string_view t) {
       ParseListenAddress("--prometheus", t);
       c.prometheus = t;
     },
     [](const Config& c) { return c.prometheus; }},
    {"--prometheus-process-names", "prometheus_process_names", "bool",
     "Label GPU processes outside the job with their names in Prometheus metrics even where "
     "other machines can read them (--prometheus on an address other than loopback, "
     "--pushgateway). Default: only the job's own process names leave this machine.",
     [](Config& c, std::string_view t) {
       c.prometheus_process_names = ParseBool("--prometheus-process-names", t);
     },
     [](const Config& c) { return std::string(c.prometheus_process_names ? "true" : "false"); }},
    {"--pushgateway", "pushgateway", "url",
     "Push each row and the last one to this Prometheus Pushgateway (http://HOST:PORT), group "
     "job=<run name>, instance=<host>. Default: off.",
     [](Config& c, std::string_view t) {
       ParseHttpUrl("--pushgateway", t);
       c.pushgateway = t;
     },
     [](const Config& c) { return c.pushgateway; }},
    {"--pushgateway-delete", "pushgateway_delete", "bool",
     "Delete the Pushgateway group at the end when the command exited 0.",
     [](Config& c, std::string_view t) {
       c.pushgateway_delete = ParseBool("--pushgateway-delete", t);
     },
     [](const Config& c) { return std::string(c.pushgateway_delete ? "true" : "false"); }},
    {"--tensorboard", "tensorboard", "path",
     "Also write TensorBoard scalars (system/..., job/..., gpu<N>/...; memory in MiB) to "
     "LOGDIR/system, a run of its own beside the training's. A new event file each start.",
     [](Config& c, std::string_view t) {
       if (t.empty()) throw ConfigError("--tensorboard: give a log directory");
       c.tensorboard = t;
     },
     [](const Config& c) { return c.tensorboard; }},
    {"--visualdl", "visualdl", "path",
     "Also write the same scalars as VisualDL records to LOGDIR/system (a new "
     "vdlrecords.<unix s>.log each start).",
     [](Config& c, std::string_view t) {
       if (t.empty()) throw ConfigError("--visualdl: give a log directory");
       c.visualdl = t;
     },
     [](const Config& c) { return c.visualdl; }},
    {"--alerts", "alerts", "path",
     "Also read the [[alert]] rules of this TOML file (docs/alerts.md); they add to the "
     "config file's and tune the built-in ones by name.",
     [](Config& c, std::string_view t) {
       if (t.empty()) throw ConfigError("--alerts: give a file of [[alert]] tables");
       std::error_code ec;
       if (!std::filesystem::is_regular_file(std::string(t), ec)) {
         throw ConfigError(fmt::format("--alerts: {} is not a file", t));
       }
       c.alert_files.emplace_back(t);
     },
     [](const Config& c) {
       std::string out;
       for (const std::string& f : c.alert_files) out += (out.empty() ? "" : ",") + f;
       return out;
     }},
    {"--no-builtin-alerts", "builtin_alerts", "bool",
     "Whether to evaluate the built-in alert rules (docs/alerts.md): an idle GPU, full GPU memory, "
     "a hot "
     "or throttled GPU, the job near its memory limit, the run directory's disk nearly full.",
     [](Config& c, std::string_view t) { c.builtin_alerts = ParseBool("--builtin-alerts", t); },
     [](const Config& c) { return std::string(c.builtin_alerts ? "true" : "false"); }},
    {"--report", "report", "bool",
     "At the end, write report.html into the run directory: the page `trainvitals report` "
     "writes.",
     [](Config& c, std::string_view t) { c.report = ParseBool("--report", t); },
     [](const Config& c) { return std::string(c.report ? "true" : "false"); }},
    {"--share", "share", "bool",
     "Make the run directory readable by every user of the machine (mode 0755). Default: only "
     "its owner can enter it (0700): it holds the command line, the working directory and the "
     "names of other users' GPU processes.",
     [](Config& c, std::string_view t) { c.share = ParseBool("--share", t); },
     [](const Config& c) { return std::string(c.share ? "true" : "false"); }},
    {"--db", "db", "path",
     "The run history the finished run is indexed in (`trainvitals runs`): an SQLite file, or "
     "a team's PostgreSQL as a postgresql:// URL (password from ~/.pgpass or PGPASSWORD). "
     "Default: $XDG_DATA_HOME/trainvitals/runs.db (~/.local/share/trainvitals/runs.db).",
     [](Config& c, std::string_view t) {
       if (t.empty()) throw ConfigError("--db: give a database file or a postgresql:// URL");
       c.db = t;
     },
     [](const Config& c) { return c.db; }},
};

std::string TomlValueText(const toml::node& node) {
  if (auto s = node.value<std::string>()) return *s;
  if (node.is_boolean()) return *node.value<bool>() ? "true" : "false";
  if (node.is_integer()) return fmt::format("{}", *node.value<int64_t>());
  if (node.is_floating_point()) return fmt::format("{}", *node.value<double>());
  if (const toml::array* arr = node.as_array()) {
    std::string out;
    for (const toml::node& item : *arr) {
      if (!item.is_integer()) throw ConfigError("expected a list of integers");
      if (!out.empty()) out += ',';
      out += fmt::format("{}", *item.value<int64_t>());
    }
    return out;
  }
  throw ConfigError("unsupported value type");
}

}  // namespace

std::string_view NearestKey(std::string_view key) {
  static const std::vector<std::string_view> keys = [] {
    std::vector<std::string_view> out;
    out.reserve(kOptions.size());
    for (const OptionDef& o : kOptions) out.push_back(o.key);
    return out;
  }();
  return NearestWord(key, keys);
}

const std::vector<OptionDef>& Options() { return kOptions; }

const OptionDef* FindOptionByKey(std::string_view key) {
  for (const OptionDef& o : kOptions) {
    if (o.key == key) return &o;
  }
  return nullptr;
}

void ApplyConfigFile(const std::string& path, Config& config) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    throw ConfigError(fmt::format("config file {} does not exist", path));
  }
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError(fmt::format("config file {} is a directory", path));
  }
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}:{}:{}: {}", path, e.source().begin.line,
                                  e.source().begin.column, e.description()));
  }
  for (const auto& [key, node] : table) {
    int line = static_cast<int>(node.source().begin.line);
    if (key.str() == "alert") {
      // [[alert]] tables: the alerts read them (src/analysis/alerts/rules_file.h).
      if (!node.is_array_of_tables()) {
        throw ConfigError(
            fmt::format("{}:{}: alert: expected [[alert]] tables (docs/alerts.md)", path, line));
      }
      config.alert_files.insert(config.alert_files.begin(), path);
      continue;
    }
    if (key.str() == "cost") {
      // The [cost] table: the cost accounting reads it (src/analysis/cost.h).
      config.cost_file = path;
      continue;
    }
    if (key.str() == "findings" && node.is_table()) {
      for (const auto& [name, value] : *node.as_table()) {
        int at = static_cast<int>(value.source().begin.line);
        ThresholdSetting setting{std::string(name.str()), 0, fmt::format("{}:{}", path, at)};
        if (const toml::array* list = value.as_array()) {
          // A list of names (profile_on): the findings check the names.
          setting.is_list = true;
          for (const toml::node& item : *list) {
            std::optional<std::string> text = item.value<std::string>();
            if (!text) {
              throw ConfigError(fmt::format("{}:{}: findings.{}: expected a list of names", path,
                                            at, name.str()));
            }
            setting.names.push_back(*text);
          }
        } else {
          std::optional<double> number = value.value<double>();
          if (!number || value.is_boolean()) {
            throw ConfigError(
                fmt::format("{}:{}: findings.{}: expected a number", path, at, name.str()));
          }
          setting.value = *number;
        }
        config.findings.push_back(std::move(setting));
      }
      continue;
    }
    const OptionDef* def = FindOptionByKey(key.str());
    if (def == nullptr) {
      std::string_view near = NearestKey(key.str());
      throw ConfigError(
          fmt::format("{}:{}: unknown key '{}'{}", path, line, key.str(),
                      near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
    }
    try {
      def->set(config, TomlValueText(node));
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}:{}: {}: {}", path, line, key.str(), e.what()));
    }
  }
}

void Validate(const Config& config) {
  if (config.pushgateway_delete && config.pushgateway.empty()) {
    throw ConfigError("--pushgateway-delete needs --pushgateway URL");
  }
  if (config.interval_s * config.sample_hz < 0.999) {
    throw ConfigError(fmt::format(
        "--interval {} s is shorter than one sample at --sample-hz {}: raise one of them",
        config.interval_s, config.sample_hz));
  }
}

std::string OptionsMarkdown() {
  Config defaults;
  std::string out = "| flag | config key | type | default | meaning |\n|---|---|---|---|---|\n";
  for (const OptionDef& o : kOptions) {
    std::string def = o.get(defaults);
    out += fmt::format("| `{}` | `{}` | {} | {} | {} |\n", o.flag, o.key, o.type,
                       def.empty() ? "" : fmt::format("`{}`", def), o.help);
  }
  return out;
}

}  // namespace tv

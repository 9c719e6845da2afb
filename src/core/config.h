// Config: every setting a user can give, defined once. Each option in
// Options() carries its flag, config-file key, type, default, help and check;
// the CLI flags, the TOML config file and docs/cli.md are all generated from
// that table. Precedence: defaults < config file < flags.
//
// Setup mistakes throw ConfigError (caught at the CLI boundary, exit code 2).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tv {

// A [findings] entry of the config file: a threshold of the analysis
// (docs/findings.md), checked by the analysis against its table.
struct ThresholdSetting {
  std::string key;
  double value = 0;
  std::string where;               // "FILE:LINE", for errors
  bool is_list = false;            // a list of names (profile_on), not a number
  std::vector<std::string> names;  // its names
};

struct Config {
  double sample_hz = 10;
  double interval_s = 1;
  std::string out;  // run directory; empty: <runs_dir>/<stamp>-<name>
  std::string runs_dir = "trainvitals-runs";
  std::string name;  // empty: derived from the command
  // The job the run belongs to (run/run_job.h); empty: derived from the
  // environment and the launcher's command line.
  std::string job_id;
  bool quiet = false;
  double kill_after_s = 20;  // run: SIGKILL the job this long after INT/TERM (0: at a second)
  std::vector<int> gpus;     // GPUs to watch as the job numbers them; empty: all
  int gpus_auto = 0;         // --gpus auto:N: claim the N freest GPUs (run only)
  bool gpu_ids = false;      // write real GPU UUIDs and serials
  std::string prometheus;    // listen address of /metrics; empty: off
  bool prometheus_process_names = false;   // names of processes outside the job, off-host too
  std::string pushgateway;                 // Pushgateway URL; empty: off
  bool pushgateway_delete = false;         // delete the group when the command exits 0
  std::string tensorboard;                 // TensorBoard log dir; empty: none
  std::string visualdl;                    // VisualDL log dir; empty: none
  std::vector<ThresholdSetting> findings;  // the config file's [findings] table
  // Files holding [[alert]] tables (the config file when it has any, then each
  // --alerts FILE), read by the alerts (src/analysis/alerts/rules_file.h).
  std::vector<std::string> alert_files;
  bool builtin_alerts = true;  // the built-in alert rules (docs/alerts.md)
  std::string cost_file;       // the config file when it has a [cost] table (src/analysis/cost.h)
  bool report = false;         // write report.html into the run directory at the end
  bool share = false;          // run directories readable by every user (default: 0700)
  std::string db;              // the run history database; empty: DefaultRunIndexPath()
};

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OptionDef {
  std::string_view flag;  // "--sample-hz"
  std::string_view key;   // "sample_hz" in the config file
  std::string_view type;  // "number", "seconds", "path", "text", "bool", "list"
  std::string_view help;
  // Parses `text` into `config`; throws ConfigError saying what is wrong.
  void (*set)(Config& config, std::string_view text);
  // The value in `config` as text (the default, for docs).
  std::string (*get)(const Config& config);
};

// Options of the commands that monitor (run, attach).
const std::vector<OptionDef>& Options();
const OptionDef* FindOptionByKey(std::string_view key);
// The option key `key` is probably a typo of ("intervall": "interval"); empty
// when none is near.
std::string_view NearestKey(std::string_view key);

// Applies a TOML config file over `config`. Throws ConfigError naming the file,
// line and key for unknown keys (with the near key, if any), wrong types and bad
// values, and saying so plainly when the file does not exist. A [findings]
// table's numbers go to `config.findings` as they are; [[alert]] and [cost]
// tables are read by their own modules from the file named in `config`.
void ApplyConfigFile(const std::string& path, Config& config);
// Checks relations between options (interval vs sample rate). Throws ConfigError.
void Validate(const Config& config);
// Markdown table of the options, for docs/cli.md.
std::string OptionsMarkdown();

}  // namespace tv

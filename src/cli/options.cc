#include "cli/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "cli/commands.h"
#include "core/size.h"
#include "run/run_dir.h"
#include "sources/gpu_source.h"

namespace tv {
namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Checks one flag's value as it is parsed, so a bad value is a usage error of
// the command that took it (cli/usage_error.h words it): the table's own
// check, run on a scratch configuration. Throws CLI::ValidationError.
void CheckValue(const OptionDef& def, const std::string& value) {
  std::string flag(def.flag);
  if (def.type == "seconds" || def.type == "number") {
    double v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v)) {
      throw CLI::ValidationError(flag, fmt::format("\"{}\" is not a number{}", value,
                                                   def.type == "seconds" ? " of seconds" : ""));
    }
  }
  Config scratch;
  try {
    def.set(scratch, value);
  } catch (const ConfigError& e) {
    std::string_view what = e.what();
    if (what.starts_with(flag + ": ")) {
      throw CLI::ValidationError(flag, std::string(what.substr(flag.size() + 2)));
    }
    throw CLI::ValidationError(std::string(what));
  }
}

}  // namespace

CLI::Validator SizeValue() {
  return CLI::Validator(
      [](std::string& value) {
        std::string error;
        std::optional<uint64_t> bytes = ParseSize(value, &error);
        if (!bytes) return error;
        value = std::to_string(*bytes);
        return std::string();
      },
      // As --help has always shown it.
      "SIZE [b, kb(=1000b), kib(=1024b), ...]");
}

void MonitorOptions::AddTo(CLI::App* cmd) {
  cmd->add_option("--config", config_file_,
                  "TOML file of settings (keys as in docs/cli.md); default $TRAINVITALS_CONFIG");
  for (const OptionDef& def : Options()) {
    std::string help(def.help);
    if (def.type == "bool") {
      // Called for the flag given, or given a true value ("--quiet=yes"); a value
      // that is no truth value ("--quiet=maybe") is a usage error.
      cmd->add_flag_callback(
          std::string(def.flag),
          [this, d = &def] {
            // "--no-X" turns off what its config key turns on.
            given_.emplace_back(d, d->flag.starts_with("--no-") ? "false" : "true");
          },
          help);
    } else {
      cmd->add_option_function<std::string>(
             std::string(def.flag),
             [this, d = &def](const std::string& v) {
               CheckValue(*d, v);
               given_.emplace_back(d, v);
             },
             help)
          ->type_name(Upper(def.type));
    }
  }
}

std::string RunArgumentHelp(std::string_view what) {
  return fmt::format(
      "{}: a run directory, its directory's name in trainvitals-runs/ (\"latest\": the newest "
      "run), or a run's --name or script (the newest run of that name)",
      what);
}

void AddRunsDirOption(CLI::App* cmd, std::string* runs_dir) {
  cmd->add_option("--runs-dir", *runs_dir,
                  "Where --job looks for its run directories, down to three levels (a shared "
                  "file system's root); default the config's runs_dir (trainvitals-runs)")
      ->type_name("DIR");
}

std::vector<std::string> JobRunDirs(const std::string& job, const std::string& runs_dir,
                                    const Config& config) {
  return RunDirsOfJob(job, runs_dir.empty() ? config.runs_dir : runs_dir);
}

std::string ConfigFilePath(const std::string& given) {
  if (!given.empty()) return given;
  const char* env = std::getenv("TRAINVITALS_CONFIG");
  return env != nullptr ? env : "";
}

Config MonitorOptions::Resolve() const {
  Config config;
  if (std::string file = ConfigFilePath(config_file_); !file.empty()) {
    ApplyConfigFile(file, config);
  }
  for (const auto& [def, value] : given_) def->set(config, value);
  Validate(config);
  return config;
}

void CheckGpuChoice(const Config& config) {
  if (config.gpus.empty()) return;
  std::vector<Notice> notices;
  std::unique_ptr<GpuSource> source =
      GpuSource::Create(GpuSourceOptions::FromEnvironment(), &notices);
  if (source == nullptr) return;
  std::vector<int> seen;
  for (const GpuInfo& g : source->gpus()) {
    if (std::find(seen.begin(), seen.end(), g.index) == seen.end()) seen.push_back(g.index);
  }
  for (int want : config.gpus) {
    if (std::find(seen.begin(), seen.end(), want) != seen.end()) continue;
    const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
    throw ConfigError(
        fmt::format("--gpus: there is no GPU {}: the job sees {} GPU{} ({}){}", want, seen.size(),
                    seen.size() == 1 ? "" : "s", fmt::join(seen, ", "),
                    cvd == nullptr ? "" : fmt::format(" with CUDA_VISIBLE_DEVICES='{}'", cvd)));
  }
}

}  // namespace tv

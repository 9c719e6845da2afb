#include "cli/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "sources/gpu_source.h"

namespace tv {
namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

void MonitorOptions::AddTo(CLI::App* cmd) {
  cmd->add_option("--config", config_file_,
                  "TOML file of settings (keys as in docs/cli.md); default $TRAINVITALS_CONFIG");
  for (const OptionDef& def : Options()) {
    std::string help(def.help);
    if (def.type == "bool") {
      cmd->add_flag_function(
          std::string(def.flag),
          [this, d = &def](int64_t) {
            // "--no-X" turns off what its config key turns on.
            given_.emplace_back(d, d->flag.starts_with("--no-") ? "false" : "true");
          },
          help);
    } else {
      cmd->add_option_function<std::string>(
             std::string(def.flag),
             [this, d = &def](const std::string& v) { given_.emplace_back(d, v); }, help)
          ->type_name(Upper(def.type));
    }
  }
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
  for (const auto& g : source->static_info()["gpus"]) {
    int index = g.value("index", -1);
    if (std::find(seen.begin(), seen.end(), index) == seen.end()) seen.push_back(index);
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

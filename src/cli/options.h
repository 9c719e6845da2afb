// Binds the option table (core/config.h) to a CLI11 command, so flags, the
// config file and docs come from one definition. Precedence: defaults < config
// file (--config, else $TRAINVITALS_CONFIG) < flags.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"

namespace tv {

class MonitorOptions {
 public:
  // Adds --config and every option of the table to `cmd`.
  void AddTo(CLI::App* cmd);
  // The resulting configuration; throws ConfigError for bad values.
  Config Resolve() const;

 private:
  std::string config_file_;
  std::vector<std::pair<const OptionDef*, std::string>> given_;
};

}  // namespace tv

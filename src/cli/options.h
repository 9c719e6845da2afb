// Binds the option table (core/config.h) to a CLI11 command, so flags, the
// config file and docs come from one definition. Precedence: defaults < config
// file (--config, else $TRAINVITALS_CONFIG) < flags.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
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

// The config file to read: `given` (--config), else $TRAINVITALS_CONFIG;
// empty for none.
std::string ConfigFilePath(const std::string& given);

// The help of the RUN argument of export, analyze, report and compare, led by
// `what` ("The run"): every form ResolveRunDir (run/run_dir.h) takes.
std::string RunArgumentHelp(std::string_view what);

// --runs-dir DIR: where --job finds a job's run directories (analyze, report, compare).
void AddRunsDirOption(CLI::App* cmd, std::string* runs_dir);
// The run directories of job `job` under `runs_dir`, else under the config's
// runs_dir (RunDirsOfJob: a ConfigError when there is none).
std::vector<std::string> JobRunDirs(const std::string& job, const std::string& runs_dir,
                                    const Config& config);

// Checks --gpus against the GPUs the job sees (CUDA_VISIBLE_DEVICES applied).
// Throws ConfigError naming an index that is not there. Without an NVIDIA
// driver there is nothing to check against: the run says so and goes on.
void CheckGpuChoice(const Config& config);

}  // namespace tv

// trainvitals compare RUN_A RUN_B [RUN...] [--json] [--config FILE]: the
// headline figures of runs side by side, each against the first.
#include "views/compare.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "analysis/cost.h"
#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/options.h"
#include "core/config.h"
#include "run/run_dir.h"

namespace tv {

void AddCompareCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare runs: duration, steps/s, data wait, GPU busy share, peak memory, GPU-hours, "
      "energy (also per epoch), CO2e, money and health side by side, each with its change "
      "against the first run; epochs matched by number.");
  auto runs = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  auto config_file = std::make_shared<std::string>();
  cmd->add_option("RUN", *runs,
                  "Two or more run directories, or their names in trainvitals-runs/ "
                  "(\"latest\": the newest run)")
      ->required()
      ->expected(2, 64);
  cmd->add_flag("--json", *json, "Print the comparison as JSON (figures, changes, epochs)");
  cmd->add_option("--config", *config_file,
                  "TOML file whose [cost] table prices runs written before costs existed "
                  "(docs/cost.md); default $TRAINVITALS_CONFIG");
  cmd->callback([runs, json, config_file, action] {
    *action = [runs, json, config_file]() {
      Config config;
      if (std::string file = ConfigFilePath(*config_file); !file.empty()) {
        ApplyConfigFile(file, config);
      }
      CostRates rates = LoadCostRates(config.cost_file);
      std::vector<ComparedRun> compared;
      for (const std::string& run : *runs) {
        std::string dir = ResolveRunDir(run, config.runs_dir);
        std::string label = std::filesystem::path(dir).lexically_normal().filename().string();
        if (label.empty()) label = std::filesystem::path(dir).parent_path().filename().string();
        compared.push_back({label, ReadRunSummary(dir, rates)});
      }
      nlohmann::ordered_json comparison = CompareRuns(compared);
      if (*json) {
        PrintJson(comparison);
      } else {
        std::cout << FormatComparison(comparison);
      }
      return 0;
    };
  });
}

}  // namespace tv

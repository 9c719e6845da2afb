// trainvitals compare RUN_A RUN_B [RUN...] [--json] [--config FILE]: the
// headline figures of runs side by side, each against the first.
#include "views/compare.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <optional>

#include "analysis/cost.h"
#include "analysis/judges.h"
#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/options.h"
#include "core/config.h"
#include "run/run_dir.h"

namespace tv {
namespace {

// CLI11 shows two or more RUNs as "RUN(2x)": the usage line says "RUN RUN [RUN...]".
class CompareUsage : public CLI::Formatter {
 public:
  std::string make_option_usage(const CLI::Option* opt) const override {
    std::string name = make_option_name(opt, true);
    std::string out = name;
    for (int i = 1; i < opt->get_expected_min(); ++i) out += " " + name;
    if (opt->get_expected_max() > opt->get_expected_min()) out += " [" + name + "...]";
    return out;
  }
};

}  // namespace

void AddCompareCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare runs: duration, steps/s, data wait, GPU busy share, peak memory, GPU-hours, "
      "energy (also per epoch), CO2e, money and health side by side, each with its change "
      "against the first run; epochs matched by number.");
  auto runs = std::make_shared<std::vector<std::string>>();
  auto json = std::make_shared<bool>(false);
  auto config_file = std::make_shared<std::string>();
  cmd->add_option("RUN", *runs, RunArgumentHelp("Two or more runs"))
      ->required()
      ->expected(2, 64)
      ->option_text("TEXT ... REQUIRED");
  cmd->formatter(std::make_shared<CompareUsage>());
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
      CostRates config_rates = LoadCostRates(config.cost_file);
      std::vector<ComparedRun> compared;
      for (const std::string& run : *runs) {
        std::string dir = ResolveRunDir(run, config.runs_dir);
        // A run without a cost is costed at the rates its meta.json recorded,
        // the config's only where it recorded none (as report does).
        std::optional<CostRates> own = ReadRunJudges(dir).cost_rates;
        RunFiles files = ReadFinishedRun(dir, own ? *own : config_rates);
        // Named as its owner knows it: its --name, else its script; else its directory.
        std::string label = RunLabel(files.meta);
        if (label.empty()) {
          std::filesystem::path path = std::filesystem::path(dir).lexically_normal();
          label = path.filename().empty() ? path.parent_path().filename().string()
                                          : path.filename().string();
        }
        compared.push_back({label, std::move(files.summary), files.meta.start_t});
      }
      Comparison comparison = CompareRuns(compared);
      if (*json) {
        PrintJson(ComparisonJson(comparison));
      } else {
        std::cout << FormatComparison(comparison);
      }
      return 0;
    };
  });
}

}  // namespace tv

// trainvitals compare RUN_A RUN_B [RUN...] [--job ID...] [--json] [--config
// FILE]: the headline figures of runs side by side, each against the first; a
// job on several nodes (--job) is one column of its nodes' figures together.
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

// CLI11 shows RUNs as "RUN ...": the usage line says "[RUN...]".
class CompareUsage : public CLI::Formatter {
 public:
  std::string make_option_usage(const CLI::Option* opt) const override {
    std::string name = make_option_name(opt, true);
    if (!opt->get_positional()) return CLI::Formatter::make_option_usage(opt);
    std::string out;
    for (int i = 0; i < opt->get_expected_min(); ++i) out += (out.empty() ? "" : " ") + name;
    if (opt->get_expected_max() > opt->get_expected_min()) {
      out += (out.empty() ? "[" : " [") + name + "...]";
    }
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
  auto jobs = std::make_shared<std::vector<std::string>>();
  auto runs_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto config_file = std::make_shared<std::string>();
  cmd->add_option("RUN", *runs, RunArgumentHelp("Two or more runs (with --job, fewer)"))
      ->expected(0, 64)
      ->option_text("TEXT ...");
  cmd->add_option("--job", *jobs,
                  "A job on several nodes as one column, after the RUNs: every run directory "
                  "whose meta.json names job ID under the runs directory, their figures put "
                  "together (repeat for each job)")
      ->type_name("ID")
      ->allow_extra_args(false);
  AddRunsDirOption(cmd, runs_dir.get());
  cmd->formatter(std::make_shared<CompareUsage>());
  cmd->add_flag("--json", *json, "Print the comparison as JSON (figures, changes, epochs)");
  cmd->add_option("--config", *config_file,
                  "TOML file whose [cost] table prices runs written before costs existed "
                  "(docs/cost.md); default $TRAINVITALS_CONFIG");
  cmd->callback([runs, jobs, runs_dir, json, config_file, action] {
    *action = [runs, jobs, runs_dir, json, config_file]() {
      if (runs->size() + jobs->size() < 2) {
        throw ConfigError(fmt::format("compare: needs at least 2 runs (RUN, --job ID), got {}",
                                      runs->size() + jobs->size()));
      }
      Config config;
      if (std::string file = ConfigFilePath(*config_file); !file.empty()) {
        ApplyConfigFile(file, config);
      }
      CostRates config_rates = LoadCostRates(config.cost_file);
      // A run without a cost is costed at the rates its meta.json recorded,
      // the config's only where it recorded none (as report does).
      auto read = [&](const std::string& dir) {
        std::optional<CostRates> own = ReadRunJudges(dir).cost_rates;
        return ReadFinishedRun(dir, own ? *own : config_rates);
      };
      std::vector<ComparedRun> compared;
      for (const std::string& run : *runs) {
        std::string dir = ResolveRunDir(run, config.runs_dir);
        RunFiles files = read(dir);
        // Named as its owner knows it: its --name, else its script; else its directory.
        std::string label = RunLabel(files.meta);
        if (label.empty()) {
          std::filesystem::path path = std::filesystem::path(dir).lexically_normal();
          label = path.filename().empty() ? path.parent_path().filename().string()
                                          : path.filename().string();
        }
        compared.push_back({label, {std::move(files.summary)}, files.meta.start_t, ""});
      }
      for (const std::string& job : *jobs) {
        ComparedRun column{"job " + job, {}, std::nullopt, job};
        for (const std::string& dir : JobRunDirs(job, *runs_dir, config)) {
          RunFiles files = read(dir);
          if (!column.start_t) column.start_t = files.meta.start_t;
          column.summaries.push_back(std::move(files.summary));
        }
        column.label += fmt::format(" ({} node{})", column.summaries.size(),
                                    column.summaries.size() == 1 ? "" : "s");
        compared.push_back(std::move(column));
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

// trainvitals analyze RUN [--json] [--config FILE]: judges a run directory
// (also one still being written) through the same analysis the live run used.
#include <fmt/format.h>

#include <iostream>

#include "analysis/findings/replay.h"
#include "analysis/judges.h"
#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/options.h"
#include "core/config.h"
#include "run/run_dir.h"
#include "views/verdict.h"

namespace tv {

void AddAnalyzeCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "analyze",
      "Judge a run: its health score and findings (what held it back, with advice), replayed "
      "from the run directory through the same rules as the live run.");
  auto run = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto config_file = std::make_shared<std::string>();
  cmd->add_option("RUN", *run, RunArgumentHelp("The run"))->required();
  cmd->add_flag("--json", *json, "Print the verdict as JSON (health, findings)");
  cmd->add_option("--config", *config_file,
                  "TOML file whose [findings] table sets the thresholds to judge with instead "
                  "of the run's own (meta.json); says which differ from the run's. Without it "
                  "the run's own; a run that recorded none: $TRAINVITALS_CONFIG, else the "
                  "defaults (docs/findings.md)");
  cmd->callback([run, json, config_file, action] {
    *action = [run, json, config_file]() {
      Config config;
      if (std::string file = ConfigFilePath(*config_file); !file.empty()) {
        ApplyConfigFile(file, config);
      }
      std::string dir = ResolveRunDir(*run, config.runs_dir);
      // The run's own thresholds (meta.json) unless --config is given.
      ThresholdChoice choice;
      Verdict v;
      try {
        choice = ChooseThresholds(ReadRunJudges(dir), *config_file, config);
        v = Replay(dir, choice.thresholds);
      } catch (const std::runtime_error& e) {
        throw ConfigError(e.what());
      }
      for (const std::string& note : choice.notes) fmt::print(stderr, "trainvitals: {}\n", note);
      if (v.rows == 0) {
        // Nothing to judge: an empty file, or one of lines that are no rows.
        std::string why;
        if (v.skipped > 0) why = fmt::format(" (first skipped: {})", v.skipped_first);
        for (const std::string& note : v.notes) {
          if (why.empty() && note.find("samples.jsonl") != std::string::npos) {
            why = " (" + note + ")";
          }
        }
        throw ConfigError(fmt::format("{}/samples.jsonl holds no rows to judge{}", dir, why));
      }
      for (const std::string& note : v.notes) fmt::print(stderr, "trainvitals: {}\n", note);
      if (*json) {
        nlohmann::ordered_json out = {{"run_dir", dir},
                                      {"rows", v.rows},
                                      {"ended", v.ended},
                                      {"health", HealthJson(v.health)},
                                      {"findings", FindingsJson(v.findings)},
                                      {"memory_trends", MemoryTrendsJson(v.memory_trends)},
                                      {"thresholds", ChoiceJson(choice)}};
        if (v.skipped > 0) out["skipped_lines"] = v.skipped, out["first_skipped"] = v.skipped_first;
        PrintJson(out);
        return 0;
      }
      if (std::string line = JudgedWithLine(choice); !line.empty()) {
        fmt::print(stderr, "trainvitals: {}\n", line);
      }
      std::string text = fmt::format("trainvitals: {} — {} rows{}\n", dir, v.rows,
                                     v.ended ? "" : ", still being written (judged so far)");
      if (v.skipped > 0) {
        text += fmt::format("  Skipped  {} line{} that are not usable (first: {})\n", v.skipped,
                            v.skipped == 1 ? "" : "s", v.skipped_first);
      }
      text += FormatMemoryTrends(v.memory_trends);
      text += FormatVerdict(v.health, v.findings);
      std::cout << text;
      return 0;
    };
  });
}

}  // namespace tv

// trainvitals analyze RUN... [--job ID] [--json] [--config FILE]: judges a run
// directory (also one still being written) through the same analysis the live
// run used; the run directories of one job's nodes as one job (joined.h).
#include <fmt/format.h>

#include <iostream>

#include "analysis/cost.h"
#include "analysis/findings/joined.h"
#include "analysis/findings/replay.h"
#include "analysis/judges.h"
#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/options.h"
#include "core/config.h"
#include "run/run_dir.h"
#include "views/cost_lines.h"
#include "views/verdict.h"

namespace tv {

namespace {

int PrintJoined(const JoinedVerdict& v, const ThresholdChoice& choice, const Config& config,
                bool json) {
  std::vector<std::string> dirs;
  for (const NodeVerdict& n : v.nodes) dirs.push_back(n.run_dir);
  std::optional<CostRecord> cost =
      JobCostOfRuns(dirs, LoadCostRates(config.cost_file), /*recost=*/false);
  if (json) {
    nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
    for (const NodeVerdict& n : v.nodes) {
      nlohmann::ordered_json node = {{"node", n.node},
                                     {"run_dir", n.run_dir},
                                     {"rows", n.verdict.rows},
                                     {"ended", n.verdict.ended},
                                     {"clock_offset_s", n.clock_offset_s},
                                     {"health", HealthJson(n.verdict.health)}};
      if (n.verdict.skipped > 0) {
        node["skipped_lines"] = n.verdict.skipped, node["first_skipped"] = n.verdict.skipped_first;
      }
      nodes.push_back(std::move(node));
    }
    nlohmann::ordered_json out = {
        {"job", v.job.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(v.job)},
        {"nodes", std::move(nodes)},
        {"clocks", v.notes},
        {"health", HealthJson(v.health)},
        {"health_node", v.health_node},
        {"findings", FindingsJson(v.findings)}};
    if (cost) out["cost"] = ToJson(*cost);
    out["thresholds"] = ChoiceJson(choice);
    PrintJson(out);
    return 0;
  }
  std::string text =
      fmt::format("trainvitals: {}{} nodes\n", v.job.empty() ? "" : fmt::format("job {} — ", v.job),
                  v.nodes.size());
  for (const NodeVerdict& n : v.nodes) {
    const Verdict& nv = n.verdict;
    text += fmt::format("  Node     {}: {}, {} rows{}{}\n", n.node, n.run_dir, nv.rows,
                        nv.ended ? "" : ", still being written",
                        nv.health.score ? fmt::format(", health {:.0f}", *nv.health.score) : "");
    if (nv.skipped > 0) {
      text += fmt::format("           skipped {} line{} that are not usable (first: {})\n",
                          nv.skipped, nv.skipped == 1 ? "" : "s", nv.skipped_first);
    }
  }
  for (const std::string& note : v.notes) text += "  Clocks   " + note + "\n";
  if (v.health.score)
    text += fmt::format("  Job      the health of its lowest node, {}\n", v.health_node);
  if (cost) text += FormatCost(*cost);
  text += FormatVerdict(v.health, v.findings);
  std::cout << text;
  return 0;
}

}  // namespace

void AddAnalyzeCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "analyze",
      "Judge a run: its health score and findings (what held it back, with advice), replayed "
      "from the run directory through the same rules as the live run. Several run directories "
      "(one job's nodes) are judged as one job: stragglers and uneven GPUs across every node.");
  auto runs = std::make_shared<std::vector<std::string>>();
  auto job = std::make_shared<std::string>();
  auto runs_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto config_file = std::make_shared<std::string>();
  cmd->add_option("RUN", *runs,
                  RunArgumentHelp("The run") +
                      "; several: the run directories of one job's nodes, judged as one job");
  cmd->add_option("--job", *job,
                  "Judge every run directory of this job (meta.json's job id: --job-id, "
                  "SLURM_JOB_ID, ...) under the runs directory as one job")
      ->type_name("ID");
  AddRunsDirOption(cmd, runs_dir.get());
  cmd->add_flag("--json", *json, "Print the verdict as JSON (health, findings)");
  cmd->add_option("--config", *config_file,
                  "TOML file whose [findings] table sets the thresholds to judge with instead "
                  "of the run's own (meta.json); says which differ from the run's. Without it "
                  "the run's own; a run that recorded none: $TRAINVITALS_CONFIG, else the "
                  "defaults (docs/findings.md)");
  cmd->callback([runs, job, runs_dir, json, config_file, action] {
    *action = [runs, job, runs_dir, json, config_file]() {
      if (runs->empty() == job->empty()) throw ConfigError("analyze: give RUN... or --job ID");
      Config config;
      if (std::string file = ConfigFilePath(*config_file); !file.empty()) {
        ApplyConfigFile(file, config);
      }
      std::vector<std::string> dirs;
      if (!job->empty()) {
        dirs = JobRunDirs(*job, *runs_dir, config);
      } else {
        for (const std::string& run : *runs) dirs.push_back(ResolveRunDir(run, config.runs_dir));
      }
      // The run's own thresholds (meta.json; the first node's) unless --config is given.
      ThresholdChoice choice;
      Verdict v;
      JoinedVerdict joined;
      try {
        choice = ChooseThresholds(ReadRunJudges(dirs[0]), *config_file, config);
        if (dirs.size() > 1 || !job->empty()) {
          joined = JoinedReplay(dirs, choice.thresholds);
        } else {
          v = Replay(dirs[0], choice.thresholds);
        }
      } catch (const std::runtime_error& e) {
        throw ConfigError(e.what());
      }
      for (const std::string& note : choice.notes) fmt::print(stderr, "trainvitals: {}\n", note);
      if (!joined.nodes.empty()) {
        for (const NodeVerdict& n : joined.nodes) {
          for (const std::string& note : n.verdict.notes) {
            fmt::print(stderr, "trainvitals: {}\n", note);
          }
        }
        if (!*json) {
          if (std::string line = JudgedWithLine(choice); !line.empty()) {
            fmt::print(stderr, "trainvitals: {}\n", line);
          }
        }
        return PrintJoined(joined, choice, config, *json);
      }
      const std::string& dir = dirs[0];
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

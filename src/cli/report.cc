// trainvitals report RUN... [-o FILE] [--compare RUN_B] [--config FILE]: one
// self-contained HTML page of a run (charts, epochs, phases, findings, alerts,
// cost), optionally with a second run overlaid; of several runs, the page of
// one job's nodes judged as one job (joined.h).
#include "views/report/report.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/cost.h"
#include "analysis/findings/joined.h"
#include "analysis/findings/replay.h"
#include "analysis/judges.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "core/config.h"
#include "run/run_dir.h"

namespace tv {
namespace {

// What the page shows of run `dir` that summary.json does not hold as the run
// wrote it, computed by the run's own code: with --config, the verdict of
// that config's thresholds and the cost at its rates; without, the verdict
// so far of a run still being written (its own thresholds), and the cost of a
// run written before costs existed (its own rates, else the config's).
ReportJudged Judge(const std::string& dir, const std::string& config_flag, const Config& config) {
  ReportJudged judged;
  RunJudges judges = ReadRunJudges(dir);
  ThresholdChoice choice = ChooseThresholds(judges, config_flag, config);
  for (const std::string& note : choice.notes) fmt::print(stderr, "trainvitals: {}\n", note);
  std::error_code ec;
  bool ended = std::filesystem::exists(std::filesystem::path(dir) / "summary.json", ec);
  if (!config_flag.empty() || !ended) {
    Verdict v = Replay(dir, choice.thresholds);
    if (v.rows > 0) {
      judged.health = std::move(v.health);
      judged.findings = std::move(v.findings);
    }
  }
  std::vector<std::string> said;
  if (std::string line = JudgedWithLine(choice); !line.empty()) said.push_back(line);
  if (ended) {
    CostRates rates = !config_flag.empty() || !judges.cost_rates ? LoadCostRates(config.cost_file)
                                                                 : *judges.cost_rates;
    std::string why;
    if (std::optional<RunFiles> files = ReadRunFiles(dir, rates, &why)) {
      judged.cost = files->summary.cost;
      if (!config_flag.empty() && judges.cost_rates &&
          CostRatesJson(rates) != CostRatesJson(*judges.cost_rates)) {
        judged.cost = BuildCost(files->summary, files->meta.gpus, rates);
        said.push_back(fmt::format("costed at the [cost] rates of --config {}", config_flag));
      }
    }
  }
  for (const std::string& line : said) {
    fmt::print(stderr, "trainvitals: {}: {}\n", dir, line);
    judged.note += (judged.note.empty() ? "" : "; ") + line;
  }
  return judged;
}

// The nodes of one job judged as one (the first node's thresholds unless
// --config is given), for the job's page.
void JudgeJob(const std::string& config_flag, const Config& config, ReportRequest* request) {
  const std::vector<std::string>& dirs = request->node_dirs;
  ThresholdChoice choice = ChooseThresholds(ReadRunJudges(dirs[0]), config_flag, config);
  for (const std::string& note : choice.notes) fmt::print(stderr, "trainvitals: {}\n", note);
  JoinedVerdict joined = JoinedReplay(dirs, choice.thresholds);
  std::string judged_with = JudgedWithLine(choice);
  if (!judged_with.empty()) fmt::print(stderr, "trainvitals: {}\n", judged_with);
  ReportJob& job = request->job;
  job.id = joined.job;
  job.health = joined.health;
  job.health_node = joined.health_node;
  job.findings = joined.findings;
  job.notes = joined.notes;
  job.cost = JobCostOfRuns(dirs, LoadCostRates(config.cost_file), !config_flag.empty());
  for (const NodeVerdict& n : joined.nodes) {
    for (const std::string& note : n.verdict.notes) fmt::print(stderr, "trainvitals: {}\n", note);
    job.nodes.push_back(n.node);
    job.clock_offsets_s.push_back(n.clock_offset_s);
    // The node's own health, and the job's findings on it on its own clock.
    ReportJudged& judged = request->node_judged.emplace_back();
    judged.note = judged_with;
    if (n.verdict.rows == 0) continue;
    judged.health = n.verdict.health;
    for (FindingRecord f : joined.findings) {
      if (f.subject.node != n.node) continue;
      f.opened_t -= n.clock_offset_s;
      if (f.closed_t) *f.closed_t -= n.clock_offset_s;
      judged.findings.push_back(std::move(f));
    }
  }
}

}  // namespace

void AddReportCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "report",
      "Write one self-contained HTML page of a run: interactive charts of GPU, CPU, memory, power "
      "and training speed with epochs, phases, findings and alerts marked; tables of epochs, "
      "phases, findings, alerts and cost. Opens from a file, makes no network request. Of "
      "several runs, one job's nodes: judged as one job and drawn on one time axis.");
  auto runs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto compare = std::make_shared<std::string>();
  auto config_file = std::make_shared<std::string>();
  auto job = std::make_shared<std::string>();
  auto runs_dir = std::make_shared<std::string>();
  cmd->add_option("RUN", *runs,
                  RunArgumentHelp("The run") +
                      "; several: the run directories of one job's nodes, on one page as one job");
  cmd->add_option("--job", *job,
                  "One page of every run directory of this job (meta.json's job id: --job-id, "
                  "SLURM_JOB_ID, ...) under the runs directory, as one job")
      ->type_name("ID");
  AddRunsDirOption(cmd, runs_dir.get());
  cmd->add_option("-o,--out", *out,
                  "The page to write. Default: RUN/report.html (the first RUN, the job's first "
                  "directory)");
  cmd->add_option("--compare", *compare,
                  "A second run (directory or name) overlaid on the charts, aligned by elapsed "
                  "time, its headline figures beside RUN's");
  cmd->add_option("--config", *config_file,
                  "TOML file to judge and cost the run(s) with instead of their own thresholds "
                  "and rates (meta.json): its [findings] and [cost] tables; the page and stderr "
                  "say which thresholds differ from the run's");
  cmd->callback([runs, out, compare, config_file, job, runs_dir, action] {
    *action = [runs, out, compare, config_file, job, runs_dir]() {
      if (runs->empty() == job->empty()) throw ConfigError("report: give RUN... or --job ID");
      if ((runs->size() > 1 || !job->empty()) && !compare->empty()) {
        throw ConfigError(
            "report: --compare overlays one run on another; several RUNs are one job's nodes "
            "(give either)");
      }
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
      ReportRequest request;
      if (dirs.size() > 1) {
        request.node_dirs = dirs;
      } else {
        request.run_dir = dirs.front();
      }
      if (!compare->empty()) request.compare_dir = ResolveRunDir(*compare, config.runs_dir);
      request.out = *out;
      ReportWritten written;
      try {
        if (!request.node_dirs.empty()) {
          JudgeJob(*config_file, config, &request);
        } else {
          request.judged = Judge(request.run_dir, *config_file, config);
        }
        if (!request.compare_dir.empty()) {
          request.compare_judged = Judge(request.compare_dir, *config_file, config);
        }
        written = WriteReport(request);
      } catch (const std::exception& e) {
        throw ConfigError(e.what());
      }
      if (written.skipped_lines > 0) {
        fmt::print(stderr, "trainvitals: skipped {} line{} that are not rows (first: {})\n",
                   written.skipped_lines, written.skipped_lines == 1 ? "" : "s",
                   written.first_skipped);
      }
      for (const std::string& note : written.notes) fmt::print(stderr, "trainvitals: {}\n", note);
      fmt::print("{}\n", written.path);
      return 0;
    };
  });
}

}  // namespace tv

// trainvitals runs [filters] [--sort KEY] [--limit N] [--json]
// trainvitals runs stats [filters] [--json]
// trainvitals runs import DIR...
// trainvitals runs show [RUN] [--job ID [--wait S]]
// The run history: every finished run, indexed in runs.db or a team's
// PostgreSQL (store/run_index.h).
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include "analysis/cost.h"
#include "cli/commands.h"
#include "cli/json_out.h"
#include "cli/options.h"
#include "core/clock.h"
#include "core/config.h"
#include "run/run_dir.h"
#include "run/run_history.h"
#include "store/db_location.h"
#include "store/run_index.h"
#include "views/runs_table.h"
#include "views/summary.h"
#include "views/terminal_row.h"

namespace tv {
namespace fs = std::filesystem;
namespace {

constexpr int64_t kDefaultLimit = 30;

// What every runs command takes: the database and the config file.
struct Common {
  std::string db;
  std::string config_file;
  bool json = false;

  void AddTo(CLI::App* cmd, bool with_json) {
    cmd->add_option("--db", db,
                    "The run history: an SQLite file, or a team's PostgreSQL as a "
                    "postgresql://[USER@]HOST[:PORT]/DB URL (password from ~/.pgpass or "
                    "PGPASSWORD) (default: the config file's db, else "
                    "$XDG_DATA_HOME/trainvitals/runs.db, ~/.local/share/trainvitals/runs.db)")
        ->type_name("FILE|URL");
    cmd->add_option("--config", config_file,
                    "TOML file of settings (its db and [cost] rates); default $TRAINVITALS_CONFIG")
        ->type_name("FILE");
    if (with_json) cmd->add_flag("--json", json, "Print JSON instead of text");
  }
  void InheritFrom(const Common& outer) {
    if (db.empty()) db = outer.db;
    if (config_file.empty()) config_file = outer.config_file;
    json = json || outer.json;
  }
  // The database path; the config file is read for its db key.
  std::string DbPath() const {
    if (!db.empty()) return db;
    Config config;
    if (std::string file = ConfigFilePath(config_file); !file.empty()) {
      ApplyConfigFile(file, config);
    }
    std::string path = RunIndexPath(config.db);
    if (path.empty()) {
      throw ConfigError(
          "no run history database: neither XDG_DATA_HOME nor HOME is set; give --db");
    }
    return path;
  }
  // Opens the history; `*path` is where it is, as it may be printed (a
  // URL's password masked).
  std::unique_ptr<RunIndex> Open(std::string* path) const {
    std::string location = DbPath();
    *path = RedactLocation(location);
    std::string error;
    std::unique_ptr<RunIndex> index = RunIndex::Open(location, &error);
    if (!index) throw ConfigError(fmt::format("run history: {}: {}", *path, error));
    return index;
  }
};

struct Filters {
  std::string since;
  std::string name;
  std::string host;
  std::string command;
  std::string user;
  std::string job;

  void AddTo(CLI::App* cmd) {
    cmd->add_option("--since", since,
                    "Runs started since WHEN: a date (2026-11-30), an ISO time "
                    "(2026-11-30T14:00, local unless it ends in Z or +HH:MM) or a duration back "
                    "from now (7d, 12h, 30m)")
        ->type_name("WHEN");
    cmd->add_option("--name", name, "Runs whose name matches this shell glob (train*)")
        ->type_name("GLOB");
    cmd->add_option("--host", host, "Runs on this host")->type_name("HOST");
    cmd->add_option("--command", command, "Runs whose command contains this text")
        ->type_name("TEXT");
    cmd->add_option("--user", user, "Runs of this user (a job's owner, for serve's jobs)")
        ->type_name("USER");
    cmd->add_option("--job", job, "Runs of this scheduler job (a Slurm job id, ...)")
        ->type_name("ID");
  }
  // Takes each filter not given here from `outer` (the parent command's).
  void InheritFrom(const Filters& outer) {
    for (auto [mine, theirs] : {std::pair{&since, &outer.since}, std::pair{&name, &outer.name},
                                std::pair{&host, &outer.host}, std::pair{&command, &outer.command},
                                std::pair{&user, &outer.user}, std::pair{&job, &outer.job}}) {
      if (mine->empty()) *mine = *theirs;
    }
  }
  RunQuery Query() const {
    RunQuery q;
    if (!since.empty()) q.since_t = ParseSince(since, Clock::Default()->WallSeconds());
    q.name_glob = name;
    q.host = host;
    q.command_text = command;
    q.user = user;
    q.job = job;
    return q;
  }
  bool Any() const {
    return !since.empty() || !name.empty() || !host.empty() || !command.empty() || !user.empty() ||
           !job.empty();
  }
};

std::string SortKeysHelp() {
  std::string out;
  for (const RunSortKey& k : RunSortKeys()) {
    out += fmt::format("{}{}{}", out.empty() ? "" : ", ", k.key, k.descending ? "" : " (asc)");
  }
  return out;
}

std::vector<RunRecord> Select(RunIndex& index, const std::string& path, const RunQuery& q) {
  std::vector<RunRecord> runs;
  std::string error;
  if (!index.Query(q, &runs, &error)) {
    throw ConfigError(fmt::format("run history: {}: {}", path, error));
  }
  return runs;
}

// The run directories DIR names: itself when it holds a run, else each
// directory in it (symbolic links such as `latest` left out), by name.
std::vector<std::string> RunDirsIn(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(fs::path(dir) / "summary.json", ec) ||
      fs::exists(fs::path(dir) / "meta.json", ec)) {
    return {dir};
  }
  std::vector<std::string> out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_symlink(ec) || !e.is_directory(ec)) continue;
    out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) out.push_back(dir);  // says why it is skipped
  return out;
}

int Import(const Common& common, const std::vector<std::string>& dirs) {
  CostRates rates = LoadCostRates(ConfigFilePath(common.config_file));
  std::string path;
  std::unique_ptr<RunIndex> index = common.Open(&path);
  int imported = 0, skipped = 0;
  for (const std::string& arg : dirs) {
    std::error_code ec;
    if (!fs::is_directory(arg, ec)) {
      fmt::print(stderr, "  skipped {}: not a directory\n", arg);
      ++skipped;
      continue;
    }
    for (const std::string& dir : RunDirsIn(arg)) {
      std::string why;
      std::optional<RunRecord> record = ReadRunDir(dir, rates, &why);
      if (record && index->Put(*record, &why)) {
        ++imported;
        continue;
      }
      fmt::print(stderr, "  skipped {}: {}\n", dir, why);
      ++skipped;
    }
  }
  fmt::print("trainvitals: imported {} run{} into {}{}\n", imported, imported == 1 ? "" : "s", path,
             skipped > 0 ? fmt::format(", skipped {}", skipped) : "");
  return imported == 0 && skipped > 0 ? 1 : 0;
}

// The newest run of scheduler job `job` in the history, asked again every
// half second for up to `wait_s` (a job `serve` follows is indexed a few
// seconds after it ended). Throws ConfigError when there is none.
std::string RunOfJob(const Common& common, const std::string& job, double wait_s) {
  std::string path;
  std::unique_ptr<RunIndex> index = common.Open(&path);
  RunQuery q;
  q.job = job;
  q.limit = 1;
  q.check_missing = false;
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  while (true) {
    if (std::vector<RunRecord> runs = Select(*index, path, q); !runs.empty()) {
      return runs[0].run_dir;
    }
    if (std::chrono::steady_clock::now() >= until) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  throw ConfigError(fmt::format("no run of job {} in {}{}", job, path,
                                wait_s > 0 ? fmt::format(" after {:g} s", wait_s) : ""));
}

int Show(const Common& common, const std::string& run, const std::string& job, double wait_s) {
  if (run.empty() == job.empty()) throw ConfigError("runs show: give RUN or --job ID");
  Config config;
  if (std::string file = ConfigFilePath(common.config_file); !file.empty()) {
    ApplyConfigFile(file, config);
  }
  std::string dir =
      job.empty() ? ResolveRunDir(run, config.runs_dir) : RunOfJob(common, job, wait_s);
  RunFiles files = ReadFinishedRun(dir, LoadCostRates(config.cost_file));
  std::string title = RunLabel(files.meta);
  if (const std::optional<JobIdentity>& id = files.meta.job) {
    title = fmt::format("{} job {}{}", id->kind, id->job,
                        id->name.empty() ? "" : " (" + id->name + ")");
  }
  int width = ::isatty(STDOUT_FILENO) ? TerminalColumns(STDOUT_FILENO) : 0;
  std::cout << FormatSummary(files.summary, width, title);
  return 0;
}

}  // namespace

void AddRunsCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "runs",
      "The run history: every finished run (run, attach, the Python callbacks) is indexed in an "
      "SQLite file, or a team's PostgreSQL (--db postgresql://...). Lists runs, newest first; "
      "`runs stats` adds them up; `runs import` "
      "indexes run directories.");
  auto common = std::make_shared<Common>();
  auto filters = std::make_shared<Filters>();
  auto sort = std::make_shared<std::string>("start");
  auto limit = std::make_shared<int64_t>(kDefaultLimit);
  filters->AddTo(cmd);
  cmd->add_option("--sort", *sort,
                  fmt::format("Order by this column, the most first (descending) unless marked "
                              "(asc): {}; unknown values last",
                              SortKeysHelp()))
      ->type_name("KEY")
      ->capture_default_str();
  cmd->add_option("--limit", *limit, "Show at most N runs (0: all)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  common->AddTo(cmd, true);
  cmd->footer("Example: trainvitals runs --since 7d --sort wasted_gpu_hours --limit 10");

  auto* stats = cmd->add_subcommand(
      "stats",
      "Add up the selected runs: count, duration, GPU-hours held and busy (the busy share "
      "weighted by GPU-hours), runs under 30% busy, energy, money where priced, the five that "
      "wasted the most GPU-hours, and the most common findings.");
  auto stats_common = std::make_shared<Common>();
  auto stats_filters = std::make_shared<Filters>();
  stats_filters->AddTo(stats);
  stats_common->AddTo(stats, true);
  auto by = std::make_shared<std::string>();
  std::string keys;
  for (std::string_view k : RunGroupKeys()) keys += fmt::format("{}{}", keys.empty() ? "" : "|", k);
  stats
      ->add_option("--by", *by,
                   "One line per user, account, namespace, ... instead: who held GPU-hours "
                   "and who wasted them")
      ->type_name(keys)
      ->check(
          CLI::IsMember(std::vector<std::string>(RunGroupKeys().begin(), RunGroupKeys().end())));
  stats->footer(
      "Examples: trainvitals runs stats --since 30d --host node7\n"
      "          trainvitals runs stats --since 7d --by user");

  auto* import_cmd = cmd->add_subcommand(
      "import",
      "Index run directories (a directory of run directories imports each), e.g. runs made "
      "before the history existed or on another machine. Runs without a cost in summary.json "
      "are costed with the config file's [cost] rates.");
  auto import_common = std::make_shared<Common>();
  auto import_dirs = std::make_shared<std::vector<std::string>>();
  import_cmd->add_option("DIR", *import_dirs, "Run directory, or a directory of them")->required();
  import_common->AddTo(import_cmd, false);
  import_cmd->footer("Example: trainvitals runs import trainvitals-runs/");

  auto* show = cmd->add_subcommand(
      "show",
      "Print a finished run's summary again, as it was said when the run ended: a run "
      "directory, or the newest run of a scheduler job in the history (--job; a job `serve "
      "--spool` kept, e.g. from a Slurm epilog: deploy/slurm/).");
  auto show_common = std::make_shared<Common>();
  auto show_run = std::make_shared<std::string>();
  auto show_job = std::make_shared<std::string>();
  auto show_wait = std::make_shared<double>(0);
  show->add_option("RUN", *show_run, RunArgumentHelp("The run"));
  show->add_option("--job", *show_job, "The newest run of this scheduler job (a Slurm job id, ...)")
      ->type_name("ID");
  show->add_option("--wait", *show_wait,
                   "With --job: wait up to this long for the job's run to be indexed")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.0, 3600.0));
  show_common->AddTo(show, false);
  show->footer("Example: trainvitals runs show --db /var/lib/trainvitals/runs.db --job 4242");

  cmd->callback([cmd, common, filters, sort, limit, action] {
    if (cmd->got_subcommand("stats") || cmd->got_subcommand("import") ||
        cmd->got_subcommand("show")) {
      return;
    }
    *action = [common, filters, sort, limit]() {
      if (FindRunSortKey(*sort) == nullptr) {
        std::string keys;
        for (const RunSortKey& k : RunSortKeys())
          keys += (keys.empty() ? "" : ", ") + std::string(k.key);
        throw ConfigError(fmt::format("--sort: unknown key '{}' (keys: {})", *sort, keys));
      }
      RunQuery q = filters->Query();
      q.sort = *sort;
      if (*limit > 0) q.limit = *limit;
      q.with_findings = common->json;
      std::string path;
      std::unique_ptr<RunIndex> index = common->Open(&path);
      std::vector<RunRecord> runs = Select(*index, path, q);
      if (common->json) {
        nlohmann::ordered_json out = {{"db", path}, {"runs", nlohmann::ordered_json::array()}};
        for (const RunRecord& r : runs) out["runs"].push_back(RecordJson(r));
        PrintJson(out);
        return 0;
      }
      if (runs.empty()) {
        std::cout << fmt::format("trainvitals: no runs in {}{}\n", path,
                                 filters->Any() ? " match" : "");
        return 0;
      }
      std::cout << FormatRunsTable(runs);
      return 0;
    };
  });
  stats->callback([common, filters, stats_common, stats_filters, by, action] {
    // `runs --since 7d stats` means what `runs stats --since 7d` does.
    stats_filters->InheritFrom(*filters);
    stats_common->InheritFrom(*common);
    *action = [stats_common, stats_filters, by]() {
      RunQuery q = stats_filters->Query();
      q.with_findings = true;
      q.check_missing = false;
      q.stats_only = true;
      q.sort.clear();  // the sums need no order
      std::string path;
      std::unique_ptr<RunIndex> index = stats_common->Open(&path);
      std::vector<RunRecord> runs = Select(*index, path, q);
      if (!by->empty()) {
        std::vector<RunGroupStats> groups = ComputeRunStatsBy(std::move(runs), *by);
        if (stats_common->json) {
          nlohmann::ordered_json out = {{"db", path}};
          out.update(GroupStatsJson(*by, groups));
          PrintJson(out);
        } else {
          std::cout << FormatGroupStats(*by, groups);
        }
        return 0;
      }
      RunStats s = ComputeRunStats(runs);
      if (stats_common->json) {
        nlohmann::ordered_json out = {{"db", path}};
        out.update(StatsJson(s));
        PrintJson(out);
        return 0;
      }
      std::cout << FormatRunStats(s);
      return 0;
    };
  });
  show->callback([common, show_common, show_run, show_job, show_wait, action] {
    show_common->InheritFrom(*common);
    *action = [show_common, show_run, show_job, show_wait]() {
      return Show(*show_common, *show_run, *show_job, *show_wait);
    };
  });
  import_cmd->callback([import_common, import_dirs, action] {
    *action = [import_common, import_dirs]() { return Import(*import_common, *import_dirs); };
  });
}

}  // namespace tv

// RunRecord: one finished run as the run history holds it (a row of the
// runs.db `runs` table, docs/schema.md "Run history"), made from the run
// directory's summary.json, meta.json and summary.json's "cost". Pure data
// and pure functions: no file or database is touched here.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "store/cost_record.h"
#include "store/meta_record.h"
#include "store/run_summary.h"

namespace tv {

struct RunFindingRef {
  std::string id;
  std::string severity;
};

struct RunRecord {
  std::string run_dir;       // absolute path; the key
  std::string name;          // meta.json "name", else the directory's name less its time stamp
  std::string command_json;  // the command as a JSON array of words
  std::string command;       // the same words joined by spaces
  std::string host;
  // Whose it is and which scheduler job it was (meta.json "user" and "job";
  // empty when unknown): the owner, the job's id and kind, its Slurm account
  // and partition, its Kubernetes namespace.
  std::string user;
  std::string job;
  std::string job_kind;
  std::string account;
  std::string partition;
  std::string namespace_name;
  std::optional<double> start_t;  // Unix seconds
  std::optional<double> end_t;
  std::optional<double> duration_s;
  std::optional<int> exit_code;
  std::optional<int> signal;
  int gpu_count = 0;                           // GPUs the job used (cost), else watched
  std::string gpu_models;                      // distinct models, ", "-joined
  std::optional<double> gpu_util_ratio_mean;   // util_ratio over the GPUs the job used
  std::optional<double> gpu_memory_bytes_max;  // highest GPU memory in use
  std::optional<double> job_memory_bytes_max;  // the job's peak (shared pages once)
  std::optional<int64_t> steps;
  std::optional<int64_t> epochs;
  std::optional<double> health_score;  // 0..100
  // summary.json "cost" (store/cost_record.h).
  std::optional<double> gpu_hours;
  std::optional<double> busy_gpu_hours;
  std::optional<double> wasted_gpu_hours;
  std::optional<double> busy_ratio;
  std::optional<double> energy_kwh;
  std::optional<double> gpu_energy_kwh;  // the GPUs the job used, before the PUE
  std::optional<double> co2e_kg;
  std::optional<double> money;
  std::string currency;  // with money
  std::vector<RunFindingRef> findings;
  // Filled by queries, never stored: the run directory no longer exists.
  bool missing = false;
};

// The record of the run directory `run_dir` (absolute) from its summary.json
// (with its cost, none when unknown) and its meta.json (a record of unknowns
// when absent). Reads what is there; absent or mistyped values stay unknown.
RunRecord RecordFromRun(const std::string& run_dir, const RunSummary& summary,
                        const MetaRecord& meta);

// The record as JSON (`runs --json`): every field, unknown ones null.
nlohmann::ordered_json RecordJson(const RunRecord& r);

// `runs stats` over a selection of runs.
struct RunStats {
  int64_t runs = 0;
  double duration_s_total = 0;
  std::optional<double> duration_s_mean;
  std::optional<double> gpu_hours;       // held, over the runs that know it
  std::optional<double> busy_gpu_hours;  // over the same runs
  std::optional<double> busy_ratio;      // busy / held: the GPU-hours-weighted mean
  std::optional<double> wasted_gpu_hours;
  // Runs whose GPUs were busy less than kLowBusyRatio of the time they held
  // them, and the GPU-hours those runs held.
  int64_t low_busy_runs = 0;
  double low_busy_gpu_hours = 0;
  std::optional<double> energy_kwh;
  std::optional<double> co2e_kg;
  // Money per currency, over the runs that priced it.
  std::vector<std::pair<std::string, double>> money;
  std::vector<const RunRecord*> top_wasters;  // by wasted GPU-hours, at most kTopWasters
  struct FindingCount {
    std::string id;
    int64_t runs = 0;
  };
  std::vector<FindingCount> findings;  // runs per finding id, most first
  static constexpr size_t kTopWasters = 5;
  static constexpr double kLowBusyRatio = 0.30;
};

// The stats of `runs` (pointers into it are kept: it must outlive the result).
// (summed in the order of their run directories: the same numbers whatever
// order the rows came in).
RunStats ComputeRunStats(const std::vector<RunRecord>& runs);

nlohmann::ordered_json StatsJson(const RunStats& s);

// What `runs stats --by KEY` groups by, in the order --help lists them:
// user, account, namespace, partition, host, node (the host: a job's node), job, name.
const std::vector<std::string_view>& RunGroupKeys();
// The value of `key` (one of RunGroupKeys()) in `r`; empty when unknown.
std::string_view RunGroupValue(const RunRecord& r, std::string_view key);

struct RunGroupStats {
  std::string group;  // the key's value; empty: the runs that do not know it
  std::vector<RunRecord> runs;
  RunStats stats;  // of `runs`
};
// `runs` grouped by `key`, each group's stats: the groups that wasted the
// most GPU-hours first, then those that held the most, then by name.
std::vector<RunGroupStats> ComputeRunStatsBy(std::vector<RunRecord> runs, std::string_view key);

// {"by": key, "groups": [{key: value, ...StatsJson}]}.
nlohmann::ordered_json GroupStatsJson(std::string_view key,
                                      const std::vector<RunGroupStats>& groups);

}  // namespace tv

#include "store/run_record.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "core/metrics.h"
#include "store/headline.h"

namespace tv {
namespace {

using OJson = nlohmann::ordered_json;

// "20261130-142501-train" -> "train": the run directory's name less its stamp.
std::string NameFromDir(const std::string& run_dir) {
  std::string base = std::filesystem::path(run_dir).filename().string();
  auto digits = [&](size_t from, size_t n) {
    if (base.size() < from + n) return false;
    return std::all_of(base.begin() + from, base.begin() + from + n,
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  };
  if (base.size() > 16 && digits(0, 8) && base[8] == '-' && digits(9, 6) && base[15] == '-') {
    return base.substr(16);
  }
  return base;
}

void PutOrNull(OJson& j, const char* key, const std::optional<double>& v) {
  j[key] = v ? OJson(*v) : OJson();
}

}  // namespace

RunRecord RecordFromRun(const std::string& run_dir, const RunSummary& summary,
                        const MetaRecord& meta) {
  RunRecord r;
  r.run_dir = run_dir;
  r.name = meta.name;
  if (r.name.empty()) r.name = NameFromDir(run_dir);
  const RunOutcome& outcome = summary.outcome;
  const RunTotals& totals = summary.totals;
  const std::vector<std::string>& command =
      outcome.command.empty() ? meta.command : outcome.command;
  if (!command.empty()) {
    r.command_json = OJson(command).dump();
    for (const std::string& word : command) r.command += (r.command.empty() ? "" : " ") + word;
  }
  r.host = meta.host;
  r.user = meta.user;
  if (const std::optional<JobIdentity>& job = meta.job) {
    if (!job->user.empty()) r.user = job->user;
    r.job = job->job;
    r.job_kind = job->kind;
    r.account = job->account;
    r.partition = job->partition;
    r.namespace_name = job->namespace_name;
  }
  r.start_t = outcome.start_t ? outcome.start_t : meta.start_t;
  r.end_t = outcome.end_t;
  r.duration_s = outcome.duration_s;
  r.exit_code = outcome.exit_code;
  r.signal = outcome.exit_signal;

  r.gpu_count = static_cast<int>(totals.gpus.size());
  for (const GpuTotals& g : totals.gpus) {
    if (auto m = g.Max(metric::kGpuMemoryUsedBytes)) {
      r.gpu_memory_bytes_max = std::max(r.gpu_memory_bytes_max.value_or(0), *m);
    }
  }
  // The headline figures as every view reads them (store/headline.h): the
  // GPU figures over the GPUs the job used, never a mean over every GPU.
  RunHeadline headline = HeadlineOf(summary);
  if (headline.gpus_used) r.gpu_count = *headline.gpus_used;
  r.gpu_util_ratio_mean = headline.gpu_util_ratio;
  std::vector<std::string> models;
  for (const GpuInfo& g : meta.gpus) {
    if (!g.name.empty() && std::find(models.begin(), models.end(), g.name) == models.end()) {
      models.push_back(g.name);
    }
  }
  for (const std::string& m : models) r.gpu_models += (r.gpu_models.empty() ? "" : ", ") + m;
  r.job_memory_bytes_max = totals.run.Max(metric::kJobMemoryBytes);

  std::optional<double> steps = totals.run.Value(metric::kTrainingSteps);
  if (!steps) steps = totals.run.Value(metric::kTrainingStep);
  if (steps && *steps >= 0 && *steps < 9.2e18) r.steps = static_cast<int64_t>(*steps);
  if (!summary.epochs.empty()) r.epochs = static_cast<int64_t>(summary.epochs.size());
  r.health_score = headline.health_score;

  if (const std::optional<CostRecord>& cost = summary.cost) {
    r.gpu_hours = cost->gpu_hours;
    r.busy_gpu_hours = cost->busy_gpu_hours;
    r.wasted_gpu_hours = cost->wasted_gpu_hours;
    r.co2e_kg = cost->co2e_kg;
  }
  r.busy_ratio = headline.gpu_busy_ratio;
  r.energy_kwh = headline.energy_kwh;
  r.gpu_energy_kwh = headline.gpu_energy_kwh;
  r.money = headline.money;
  r.currency = headline.currency;

  std::set<std::string> seen;
  for (const FindingRecord& f : summary.findings) {
    if (f.id.empty() || !seen.insert(f.id).second) continue;
    r.findings.push_back({f.id, std::string(SeverityName(f.severity))});
  }
  return r;
}

OJson RecordJson(const RunRecord& r) {
  OJson j;
  j["run_dir"] = r.run_dir;
  j["missing"] = r.missing;
  j["name"] = r.name;
  j["command"] = r.command_json.empty() ? OJson::array()
                                        : OJson::parse(r.command_json, nullptr,
                                                       /*allow_exceptions=*/false);
  if (j["command"].is_discarded()) j["command"] = r.command;
  j["host"] = r.host;
  j["user"] = r.user;
  j["job"] = r.job;
  j["job_kind"] = r.job_kind;
  j["account"] = r.account;
  j["partition"] = r.partition;
  j["namespace"] = r.namespace_name;
  PutOrNull(j, "start_t", r.start_t);
  PutOrNull(j, "end_t", r.end_t);
  PutOrNull(j, "duration_s", r.duration_s);
  j["exit_code"] = r.exit_code ? OJson(*r.exit_code) : OJson();
  j["signal"] = r.signal ? OJson(*r.signal) : OJson();
  j["gpu_count"] = r.gpu_count;
  j["gpu_models"] = r.gpu_models;
  PutOrNull(j, "gpu_util_ratio_mean", r.gpu_util_ratio_mean);
  PutOrNull(j, "gpu_memory_bytes_max", r.gpu_memory_bytes_max);
  PutOrNull(j, "job_memory_bytes_max", r.job_memory_bytes_max);
  j["steps"] = r.steps ? OJson(*r.steps) : OJson();
  j["epochs"] = r.epochs ? OJson(*r.epochs) : OJson();
  PutOrNull(j, "health_score", r.health_score);
  PutOrNull(j, "gpu_hours", r.gpu_hours);
  PutOrNull(j, "busy_gpu_hours", r.busy_gpu_hours);
  PutOrNull(j, "wasted_gpu_hours", r.wasted_gpu_hours);
  PutOrNull(j, "busy_ratio", r.busy_ratio);
  PutOrNull(j, "energy_kwh", r.energy_kwh);
  PutOrNull(j, "gpu_energy_kwh", r.gpu_energy_kwh);
  PutOrNull(j, "co2e_kg", r.co2e_kg);
  PutOrNull(j, "money", r.money);
  j["currency"] = r.money ? OJson(r.currency) : OJson();
  j["findings"] = OJson::array();
  for (const RunFindingRef& f : r.findings) {
    j["findings"].push_back({{"id", f.id}, {"severity", f.severity}});
  }
  return j;
}

RunStats ComputeRunStats(const std::vector<RunRecord>& runs) {
  RunStats s;
  s.runs = static_cast<int64_t>(runs.size());
  int64_t timed = 0;
  auto add = [](std::optional<double>& total, const std::optional<double>& v) {
    if (v) total = total.value_or(0) + *v;
  };
  std::map<std::string, double> money;
  std::map<std::string, int64_t> finding_runs;
  // Summed in the order of their directories, not as the database returned
  // them: sums of reals depend on their order, and the same runs must add up
  // to the same numbers from either history (SQLite, PostgreSQL).
  std::vector<const RunRecord*> in_order;
  in_order.reserve(runs.size());
  for (const RunRecord& r : runs) in_order.push_back(&r);
  std::sort(in_order.begin(), in_order.end(),
            [](const RunRecord* a, const RunRecord* b) { return a->run_dir < b->run_dir; });
  for (const RunRecord* run : in_order) {
    const RunRecord& r = *run;
    if (r.duration_s) s.duration_s_total += *r.duration_s, ++timed;
    if (r.gpu_hours && r.busy_gpu_hours) {
      add(s.gpu_hours, r.gpu_hours);
      add(s.busy_gpu_hours, r.busy_gpu_hours);
    }
    add(s.wasted_gpu_hours, r.wasted_gpu_hours);
    if (r.busy_ratio && *r.busy_ratio < RunStats::kLowBusyRatio) {
      ++s.low_busy_runs;
      s.low_busy_gpu_hours += r.gpu_hours.value_or(0);
    }
    add(s.energy_kwh, r.energy_kwh);
    add(s.co2e_kg, r.co2e_kg);
    if (r.money) money[r.currency] += *r.money;
    for (const RunFindingRef& f : r.findings) ++finding_runs[f.id];
    if (r.wasted_gpu_hours && *r.wasted_gpu_hours > 0) s.top_wasters.push_back(&r);
  }
  if (timed > 0) s.duration_s_mean = s.duration_s_total / static_cast<double>(timed);
  if (s.gpu_hours && *s.gpu_hours > 0) s.busy_ratio = *s.busy_gpu_hours / *s.gpu_hours;
  s.money.assign(money.begin(), money.end());
  size_t top = std::min(s.top_wasters.size(), RunStats::kTopWasters);
  std::partial_sort(s.top_wasters.begin(), s.top_wasters.begin() + static_cast<long>(top),
                    s.top_wasters.end(), [](const RunRecord* a, const RunRecord* b) {
                      if (*a->wasted_gpu_hours != *b->wasted_gpu_hours) {
                        return *a->wasted_gpu_hours > *b->wasted_gpu_hours;
                      }
                      return a->run_dir < b->run_dir;  // the same list, whatever the row order
                    });
  s.top_wasters.resize(top);
  for (const auto& [id, n] : finding_runs) s.findings.push_back({id, n});
  std::stable_sort(s.findings.begin(), s.findings.end(),
                   [](const auto& a, const auto& b) { return a.runs > b.runs; });
  return s;
}

OJson StatsJson(const RunStats& s) {
  OJson j;
  j["runs"] = s.runs;
  j["duration_s_total"] = s.duration_s_total;
  PutOrNull(j, "duration_s_mean", s.duration_s_mean);
  PutOrNull(j, "gpu_hours", s.gpu_hours);
  PutOrNull(j, "busy_gpu_hours", s.busy_gpu_hours);
  PutOrNull(j, "busy_ratio", s.busy_ratio);
  PutOrNull(j, "wasted_gpu_hours", s.wasted_gpu_hours);
  j["low_busy"] = {{"below_ratio", RunStats::kLowBusyRatio},
                   {"runs", s.low_busy_runs},
                   {"gpu_hours", s.low_busy_gpu_hours}};
  PutOrNull(j, "energy_kwh", s.energy_kwh);
  PutOrNull(j, "co2e_kg", s.co2e_kg);
  j["money"] = OJson::object();
  for (const auto& [currency, amount] : s.money) j["money"][currency] = amount;
  j["top_wasters"] = OJson::array();
  for (const RunRecord* r : s.top_wasters) {
    j["top_wasters"].push_back({{"run_dir", r->run_dir},
                                {"name", r->name},
                                {"wasted_gpu_hours", *r->wasted_gpu_hours},
                                {"gpu_hours", r->gpu_hours ? OJson(*r->gpu_hours) : OJson()},
                                {"busy_ratio", r->busy_ratio ? OJson(*r->busy_ratio) : OJson()}});
  }
  j["findings"] = OJson::array();
  for (const auto& f : s.findings) j["findings"].push_back({{"id", f.id}, {"runs", f.runs}});
  return j;
}

const std::vector<std::string_view>& RunGroupKeys() {
  static const std::vector<std::string_view> keys = {"user", "account", "namespace", "partition",
                                                     "host", "node",    "job",       "name"};
  return keys;
}

std::string_view RunGroupValue(const RunRecord& r, std::string_view key) {
  if (key == "user") return r.user;
  if (key == "account") return r.account;
  if (key == "namespace") return r.namespace_name;
  if (key == "partition") return r.partition;
  if (key == "host" || key == "node") return r.host;  // a job's node is the host it ran on
  if (key == "job") return r.job;
  if (key == "name") return r.name;
  return {};
}

std::vector<RunGroupStats> ComputeRunStatsBy(std::vector<RunRecord> runs, std::string_view key) {
  std::map<std::string, std::vector<RunRecord>, std::less<>> by;
  for (RunRecord& r : runs) by[std::string(RunGroupValue(r, key))].push_back(std::move(r));
  std::vector<RunGroupStats> groups;
  groups.reserve(by.size());
  for (auto& [group, members] : by) {
    RunGroupStats& g = groups.emplace_back();
    g.group = group;
    g.runs = std::move(members);
  }
  // Stats after the moves: they point into each group's own runs.
  for (RunGroupStats& g : groups) g.stats = ComputeRunStats(g.runs);
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
    double wa = a.stats.wasted_gpu_hours.value_or(0), wb = b.stats.wasted_gpu_hours.value_or(0);
    if (wa != wb) return wa > wb;
    return a.stats.gpu_hours.value_or(0) > b.stats.gpu_hours.value_or(0);
  });
  return groups;
}

OJson GroupStatsJson(std::string_view key, const std::vector<RunGroupStats>& groups) {
  OJson j = {{"by", key}, {"groups", OJson::array()}};
  for (const RunGroupStats& g : groups) {
    OJson one = {{std::string(key), g.group.empty() ? OJson() : OJson(g.group)}};
    one.update(StatsJson(g.stats));
    j["groups"].push_back(std::move(one));
  }
  return j;
}

}  // namespace tv

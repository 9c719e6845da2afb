#include "store/run_record.h"

#include <gtest/gtest.h>

#include "store/summary_fixture.h"

namespace tv::run_record_test {
namespace {

using Json = nlohmann::ordered_json;

// A cost object as summary.json holds it, read.
std::optional<CostRecord> Cost(const Json& j) {
  CostRecord c;
  EXPECT_TRUE(CostFromJson(j, &c).ok());
  return c;
}

TEST(RunRecord, ReadsTheSummaryMetaAndCost) {
  Json summary = Json::parse(R"({
    "command": ["python", "train.py", "--lr", "0.1"],
    "start_t": 1000.5, "end_t": 4600.5, "duration_s": 3600, "exit_code": 137, "exit_signal": 9,
    "job": {"memory_bytes": {"mean": 1e9, "max": 3e9}},
    "gpus": [{"index": 0, "util_ratio": {"mean": 0.2, "max": 1}, "memory_used_bytes": {"max": 5e9}},
             {"index": 1, "util_ratio": {"mean": 0.6, "max": 1}, "memory_used_bytes": {"max": 7e9}}],
    "training": {"steps": 1200, "step": 1199, "epoch": 3},
    "epochs": [{"epoch": 0}, {"epoch": 1}, {"epoch": 2}],
    "health": {"score": 61},
    "findings": [{"id": "input-bound", "severity": "warning"},
                 {"id": "gpu-idle", "severity": "critical"},
                 {"id": "input-bound", "severity": "warning"}]
  })");
  Json meta = Json::parse(R"({"name": "train", "host": "node7",
    "gpus": [{"name": "NVIDIA H100"}, {"name": "NVIDIA H100"}, {"name": "NVIDIA A10"}]})");
  Json cost = Json::parse(R"({"gpus_used": 2, "gpu_hours": 2, "busy_gpu_hours": 0.8,
    "wasted_gpu_hours": 1.2, "busy_ratio": 0.4, "energy_kwh": 1.5, "co2e_kg": 0.7,
    "currency": "EUR", "money": 12.5})");
  RunSummary read = SummaryOfJson(summary);
  read.cost = Cost(cost);
  RunRecord r = RecordFromRun("/runs/20261130-101010-train", read, MetaFromJson(meta));
  EXPECT_EQ(r.run_dir, "/runs/20261130-101010-train");
  EXPECT_EQ(r.name, "train");
  EXPECT_EQ(r.command_json, R"(["python","train.py","--lr","0.1"])");
  EXPECT_EQ(r.command, "python train.py --lr 0.1");
  EXPECT_EQ(r.host, "node7");
  EXPECT_EQ(r.start_t, 1000.5);
  EXPECT_EQ(r.end_t, 4600.5);
  EXPECT_EQ(r.duration_s, 3600);
  EXPECT_EQ(r.exit_code, 137);
  EXPECT_EQ(r.signal, 9);
  EXPECT_EQ(r.gpu_count, 2);
  EXPECT_EQ(r.gpu_models, "NVIDIA H100, NVIDIA A10");
  EXPECT_DOUBLE_EQ(*r.gpu_util_ratio_mean, 0.4);
  EXPECT_EQ(r.gpu_memory_bytes_max, 7e9);
  EXPECT_EQ(r.job_memory_bytes_max, 3e9);
  EXPECT_EQ(r.steps, 1200);
  EXPECT_EQ(r.epochs, 3);
  EXPECT_EQ(r.health_score, 61);
  EXPECT_EQ(r.gpu_hours, 2);
  EXPECT_EQ(r.busy_gpu_hours, 0.8);
  EXPECT_EQ(r.wasted_gpu_hours, 1.2);
  EXPECT_EQ(r.busy_ratio, 0.4);
  EXPECT_EQ(r.energy_kwh, 1.5);
  EXPECT_EQ(r.co2e_kg, 0.7);
  EXPECT_EQ(r.money, 12.5);
  EXPECT_EQ(r.currency, "EUR");
  ASSERT_EQ(r.findings.size(), 2u) << "a finding counts once per run";
  EXPECT_EQ(r.findings[0].id, "input-bound");
  EXPECT_EQ(r.findings[1].severity, "critical");
}

TEST(RunRecord, WhatIsAbsentStaysUnknown) {
  RunRecord r =
      RecordFromRun("/runs/20261130-101010-my-job", SummaryOfJson(Json::parse(R"({"exit_code": null,
    "gpus": [], "duration_s": "soon"})")),
                    MetaRecord());
  EXPECT_EQ(r.name, "my-job") << "the directory's name less its time stamp";
  EXPECT_FALSE(r.exit_code.has_value());
  EXPECT_FALSE(r.duration_s.has_value());
  EXPECT_FALSE(r.gpu_util_ratio_mean.has_value());
  EXPECT_FALSE(r.gpu_hours.has_value());
  EXPECT_FALSE(r.steps.has_value());
  EXPECT_FALSE(r.epochs.has_value());
  EXPECT_EQ(r.gpu_count, 0);
  EXPECT_EQ(r.currency, "");
  EXPECT_EQ(RecordFromRun("/x/plain-name", RunSummary(), MetaRecord()).name, "plain-name");
}

RunRecord Costed(std::string name, double duration_s, double gpu_hours, double busy_gpu_hours,
                 std::vector<std::string> findings = {}) {
  RunRecord r;
  r.name = std::move(name);
  r.run_dir = "/runs/" + r.name;
  r.duration_s = duration_s;
  r.gpu_hours = gpu_hours;
  r.busy_gpu_hours = busy_gpu_hours;
  r.wasted_gpu_hours = gpu_hours - busy_gpu_hours;
  r.busy_ratio = gpu_hours > 0 ? busy_gpu_hours / gpu_hours : 0;
  r.energy_kwh = gpu_hours * 0.5;
  for (std::string& f : findings) r.findings.push_back({std::move(f), "warning"});
  return r;
}

TEST(RunStats, AddsUpHandMadeRuns) {
  std::vector<RunRecord> runs = {
      Costed("a", 3600, 8, 6, {"input-bound"}),
      Costed("b", 1800, 4, 0.4, {"input-bound", "gpu-idle"}),
      Costed("c", 600, 1, 0.25, {"gpu-idle", "input-bound"}),
      Costed("d", 60, 10, 9),
      Costed("e", 7200, 2, 0.9),
      Costed("f", 30, 3, 0.3),
  };
  runs.push_back(RunRecord{});  // an old run that knows nothing
  runs.back().name = "unknown";
  runs[1].money = 4, runs[1].currency = "USD";
  runs[2].money = 1.5, runs[2].currency = "USD";
  runs[3].money = 7, runs[3].currency = "EUR";
  RunStats s = ComputeRunStats(runs);
  EXPECT_EQ(s.runs, 7);
  EXPECT_DOUBLE_EQ(s.duration_s_total, 3600 + 1800 + 600 + 60 + 7200 + 30);
  EXPECT_DOUBLE_EQ(*s.duration_s_mean, (3600 + 1800 + 600 + 60 + 7200 + 30) / 6.0);
  EXPECT_DOUBLE_EQ(*s.gpu_hours, 28);
  EXPECT_NEAR(*s.busy_gpu_hours, 16.85, 1e-9);
  EXPECT_NEAR(*s.busy_ratio, 16.85 / 28, 1e-12) << "weighted by GPU-hours, not a mean of ratios";
  EXPECT_NEAR(*s.wasted_gpu_hours, 28 - 16.85, 1e-9);
  EXPECT_DOUBLE_EQ(*s.energy_kwh, 14);
  EXPECT_EQ(s.low_busy_runs, 3) << "b (10%), c (25%), f (10%) are under 30%";
  EXPECT_DOUBLE_EQ(s.low_busy_gpu_hours, 4 + 1 + 3);
  ASSERT_EQ(s.money.size(), 2u);
  EXPECT_EQ(s.money[0], (std::pair<std::string, double>("EUR", 7)));
  EXPECT_EQ(s.money[1], (std::pair<std::string, double>("USD", 5.5)));
  ASSERT_EQ(s.top_wasters.size(), RunStats::kTopWasters);
  std::vector<std::string> names;
  for (const RunRecord* r : s.top_wasters) names.push_back(r->name);
  EXPECT_EQ(names, (std::vector<std::string>{"b", "f", "a", "e", "d"}));
  ASSERT_EQ(s.findings.size(), 2u);
  EXPECT_EQ(s.findings[0].id, "input-bound");
  EXPECT_EQ(s.findings[0].runs, 3);
  EXPECT_EQ(s.findings[1].id, "gpu-idle");
  EXPECT_EQ(s.findings[1].runs, 2);
  Json j = StatsJson(s);
  EXPECT_EQ(j["runs"], 7);
  EXPECT_EQ(j["money"]["USD"], 5.5);
  EXPECT_EQ(j["top_wasters"][0]["name"], "b");
  EXPECT_EQ(j["low_busy"]["runs"], 3);
}

TEST(RunStats, GroupsByTheKeyTheWorstWastersFirst) {
  auto run = [](std::string user, std::string account, double held, double wasted) {
    RunRecord r;
    r.run_dir = "/runs/" + user + std::to_string(held);
    r.user = std::move(user);
    r.account = std::move(account);
    r.duration_s = 3600;
    r.gpu_hours = held;
    r.busy_gpu_hours = held - wasted;
    r.wasted_gpu_hours = wasted;
    r.busy_ratio = (held - wasted) / held;
    return r;
  };
  std::vector<RunRecord> runs = {run("alice", "vision", 4, 1), run("bob", "nlp", 2, 1.9),
                                 run("alice", "vision", 2, 0.5), run("", "", 1, 0)};
  std::vector<RunGroupStats> by_user = ComputeRunStatsBy(runs, "user");
  ASSERT_EQ(by_user.size(), 3u);
  EXPECT_EQ(by_user[0].group, "bob");  // 1.9 GPU-h wasted
  EXPECT_EQ(by_user[1].group, "alice");
  EXPECT_EQ(by_user[1].stats.runs, 2);
  EXPECT_DOUBLE_EQ(*by_user[1].stats.gpu_hours, 6);
  EXPECT_DOUBLE_EQ(*by_user[1].stats.wasted_gpu_hours, 1.5);
  EXPECT_DOUBLE_EQ(*by_user[1].stats.busy_ratio, 4.5 / 6);
  EXPECT_EQ(by_user[2].group, "");
  EXPECT_EQ(by_user[0].stats.low_busy_runs, 1);
  nlohmann::ordered_json j = GroupStatsJson("user", by_user);
  EXPECT_EQ(j["by"], "user");
  EXPECT_EQ(j["groups"][1]["user"], "alice");
  EXPECT_TRUE(j["groups"][2]["user"].is_null());
  EXPECT_EQ(j["groups"][1]["runs"], 2);
  EXPECT_EQ(ComputeRunStatsBy(runs, "account")[1].group, "vision");
  runs[1].host = "gpu-b";  // a job's node is the host it ran on
  EXPECT_EQ(ComputeRunStatsBy(runs, "node")[0].group, "gpu-b");
  EXPECT_EQ(RunGroupValue(runs[1], "node"), RunGroupValue(runs[1], "host"));
  for (std::string_view key : RunGroupKeys()) {
    size_t total = 0;
    for (const RunGroupStats& g : ComputeRunStatsBy(runs, key)) total += g.runs.size();
    EXPECT_EQ(total, runs.size()) << key;
  }
}

TEST(RunRecord, TheOwnerAndTheJobComeFromMeta) {
  MetaRecord meta;
  meta.user = "agent";
  JobIdentity job;
  job.job = "77";
  job.kind = "slurm";
  job.user = "carol";
  job.account = "physics";
  job.partition = "a100";
  meta.job = job;
  RunRecord r = RecordFromRun("/runs/x", RunSummary(), meta);
  EXPECT_EQ(r.user, "carol") << "the job's owner, not the agent's";
  EXPECT_EQ(r.job, "77");
  EXPECT_EQ(r.job_kind, "slurm");
  EXPECT_EQ(r.account, "physics");
  EXPECT_EQ(r.partition, "a100");
  meta.job.reset();
  EXPECT_EQ(RecordFromRun("/runs/x", RunSummary(), meta).user, "agent");
  // meta.json keeps the identity and reads it back.
  meta.job = job;
  MetaRecord back = MetaFromJson(MetaJson(meta));
  ASSERT_TRUE(back.job.has_value());
  EXPECT_EQ(back.job->account, "physics");
  EXPECT_EQ(back.user, "agent");
  EXPECT_FALSE(MetaJson(meta)["job"].contains("namespace")) << "only what is known";
}

TEST(RunStats, NoRunsKnowNothing) {
  RunStats s = ComputeRunStats({});
  EXPECT_EQ(s.runs, 0);
  EXPECT_FALSE(s.duration_s_mean.has_value());
  EXPECT_FALSE(s.gpu_hours.has_value());
  EXPECT_FALSE(s.busy_ratio.has_value());
  EXPECT_TRUE(s.top_wasters.empty());
  EXPECT_TRUE(StatsJson(s)["busy_ratio"].is_null());
}

TEST(RunRecord, GpuUtilAndEnergyAreOverTheGpusTheJobUsedOnly) {
  // GPU 1 held another job's work at 90 %: a mean over every GPU would say 65 %.
  Json summary = Json::parse(R"({
    "gpus": [{"index": 0, "util_ratio": {"mean": 0.4, "max": 1},
              "job_processes": {"mean": 1, "max": 1}, "energy_joules": 900},
             {"index": 1, "util_ratio": {"mean": 0.9, "max": 1},
              "job_processes": {"mean": 0, "max": 0}, "energy_joules": 1440}]})");
  Json cost = Json::parse(R"({"gpus_used": 1, "busy_ratio": 0.5, "busy_basis": "sm_active_ratio",
    "gpu_energy_kwh": 0.00025, "energy_kwh": 0.0003})");
  RunSummary read = SummaryOfJson(summary);
  read.cost = Cost(cost);
  RunRecord r = RecordFromRun("/runs/x", read, MetaRecord());
  EXPECT_EQ(r.gpu_count, 1);
  EXPECT_DOUBLE_EQ(*r.gpu_util_ratio_mean, 0.4) << "util_ratio, whatever the busy basis";
  EXPECT_EQ(r.busy_ratio, 0.5);
  EXPECT_EQ(r.gpu_energy_kwh, 0.00025);
  EXPECT_EQ(RecordJson(r)["gpu_energy_kwh"], 0.00025);
}

}  // namespace
}  // namespace tv::run_record_test

#include "run/job_spool.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "analysis/findings/table.h"
#include "run/fleet.h"
#include "store/run_index.h"

namespace tv {
namespace {

namespace fs = std::filesystem;

NodeJob SlurmJob(std::string id, std::string user, bool computes) {
  NodeJob j;
  auto identity = std::make_shared<JobIdentity>();
  identity->job = std::move(id);
  identity->kind = "slurm";
  identity->user = std::move(user);
  identity->account = "vision";
  j.identity = identity;
  j.started_t = 100;
  j.job.cpu_cores = 1;
  j.job.memory_bytes = 2e9;
  j.job.processes = 1;
  j.gpus.push_back(JobGpuShare{.gpu = computes ? 0U : 1U,
                               .allocated = true,
                               .processes = 1,
                               .memory_bytes = 3e9,
                               .sm_util_ratio = computes ? 0.9 : 0.0});
  return j;
}

Sample NodeAt(double t, std::vector<NodeJob> jobs) {
  Sample s;
  s.t = t;
  s.host.memory_total_bytes = 64e9;
  for (int i = 0; i < 2; ++i) {
    GpuSample& g = s.gpus.emplace_back();
    g.index = g.physical_index = i;
    g.util_ratio = i == 0 ? 0.9 : 0.0;
    g.memory_used_bytes = 3e9;
    g.memory_total_bytes = 80e9;
  }
  s.node_jobs = std::move(jobs);
  return s;
}

std::vector<nlohmann::json> Lines(const fs::path& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

nlohmann::json ReadJson(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

class JobSpoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("tv-spool-{}", ::getpid());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Runs the fleet over ticks 101..`end` (one row each) with job 9 holding
  // GPU 1 idle and job 10 computing on GPU 0, both ending at `end`, then two
  // more rows; everything goes through a spool as the sink thread hands it.
  void Play(int end) {
    FleetOptions options;
    options.linger_s = 0;
    options.thresholds = ThresholdsFrom({{"warmup_s", 2, ""}, {"gpu_unused_s", 4, ""}});
    Fleet fleet(options);
    JobSpoolOptions spool;
    spool.dir = dir_.string();
    spool.db = (dir_ / "runs.db").string();
    spool.node.host = "node7";
    spool.node.mode = "serve";
    for (int i = 0; i < 2; ++i) spool.node.gpus.push_back(GpuInfo{.index = i, .name = "H200"});
    JobSpool sink(spool);
    for (int t = 101; t <= end + 2; ++t) {
      std::vector<NodeJob> jobs;
      if (t < end) jobs = {SlurmJob("9", "alice", false), SlurmJob("10", "bob", true)};
      std::vector<Event> events;
      fleet.OnSample(NodeAt(t, jobs), &events);
      for (const Event& e : events) sink.OnEvent(e);
      events.clear();
      Row row;
      row.t = t;
      fleet.OnRow(&row, &events);
      sink.OnRow(row);
      for (const Event& e : events) sink.OnEvent(e);
    }
    sink.OnClose();
  }
  fs::path RunOf(const std::string& job) const {
    for (const fs::directory_entry& e : fs::directory_iterator(dir_)) {
      if (e.path().filename().string().ends_with("-slurm-" + job)) return e.path();
    }
    return {};
  }
  fs::path dir_;
};

TEST_F(JobSpoolTest, EachEndedJobIsARunDirectoryInTheHistory) {
  Play(113);
  fs::path idle = RunOf("9");
  ASSERT_FALSE(idle.empty());
  nlohmann::json meta = ReadJson(idle / "meta.json");
  EXPECT_EQ(meta["mode"], "serve");
  EXPECT_EQ(meta["host"], "node7");
  EXPECT_EQ(meta["user"], "alice");
  EXPECT_EQ(meta["job"]["id"], "9");
  EXPECT_EQ(meta["job"]["account"], "vision");
  ASSERT_EQ(meta["gpus"].size(), 1U) << "only the GPU it held";
  EXPECT_EQ(meta["gpus"][0]["index"], 1);
  // One row a tick while it ran, its finding as it opened.
  EXPECT_EQ(Lines(idle / "samples.jsonl").size(), 12U);
  std::vector<nlohmann::json> events = Lines(idle / "events.jsonl");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0]["type"], "finding_open");
  EXPECT_EQ(events[0]["id"], "gpu-unused");
  nlohmann::json summary = ReadJson(idle / "summary.json");
  ASSERT_EQ(summary["findings"].size(), 1U);
  EXPECT_EQ(summary["findings"][0]["id"], "gpu-unused");
  EXPECT_EQ(summary["run_dir"], idle.string());
  EXPECT_EQ(summary["rows"], 12);
  // One GPU held 12 s, never busy.
  EXPECT_NEAR(summary["cost"]["gpu_hours"].get<double>(), 12.0 / 3600, 1.5 / 3600);
  EXPECT_NEAR(summary["cost"]["wasted_gpu_hours"].get<double>(),
              summary["cost"]["gpu_hours"].get<double>(), 1e-9);

  nlohmann::json busy = ReadJson(RunOf("10") / "summary.json");
  EXPECT_TRUE(busy["findings"].empty()) << busy["findings"].dump();

  std::string error;
  auto index = RunIndex::Open((dir_ / "runs.db").string(), &error);
  ASSERT_NE(index, nullptr) << error;
  std::vector<RunRecord> runs;
  RunQuery all;
  all.with_findings = true;
  ASSERT_TRUE(index->Query(all, &runs, &error)) << error;
  ASSERT_EQ(runs.size(), 2U);
  std::vector<RunGroupStats> by_user = ComputeRunStatsBy(runs, "user");
  ASSERT_EQ(by_user.size(), 2U);
  EXPECT_EQ(by_user[0].group, "alice") << "the waster first";
  EXPECT_EQ(by_user[0].runs[0].job, "9");
  EXPECT_EQ(by_user[0].runs[0].account, "vision");
  ASSERT_EQ(by_user[0].runs[0].findings.size(), 1U);
  EXPECT_EQ(by_user[0].runs[0].findings[0].id, "gpu-unused");
}

}  // namespace
}  // namespace tv

#include "run/fleet.h"

#include <gtest/gtest.h>

#include "analysis/findings/table.h"
#include "core/metrics.h"
#include "sinks/prom_text.h"

namespace tv {
namespace {

NodeJob Job(std::string id, double cpu, std::optional<double> gpu_memory) {
  NodeJob j;
  auto identity = std::make_shared<JobIdentity>();
  identity->job = std::move(id);
  identity->kind = "slurm";
  identity->user = "alice";
  j.identity = identity;
  j.started_t = 100;
  j.job.cpu_cores = cpu;
  j.job.memory_bytes = 4e9;
  j.job.processes = 2;
  j.memory_limit_bytes = 8e9;
  if (gpu_memory) {
    j.gpus.push_back(JobGpuShare{.gpu = 1,
                                 .allocated = true,
                                 .processes = 1,
                                 .memory_bytes = gpu_memory,
                                 .sm_util_ratio = 0.25});
  }
  return j;
}

Sample Node(double t, std::vector<NodeJob> jobs) {
  Sample s;
  s.t = t;
  s.host.memory_total_bytes = 64e9;
  s.host.cpu_limit_cores = 16;
  for (int i = 0; i < 2; ++i) {
    GpuSample& g = s.gpus.emplace_back();
    g.index = g.physical_index = i;
    g.util_ratio = 0.9;
    g.memory_used_bytes = 9e9;
  }
  s.node_jobs = std::move(jobs);
  return s;
}

TEST(JobSampleOf, TheJobsFiguresUnderItsOwnLimitsAndItsShareOfItsGpus) {
  Sample s = JobSampleOf(Node(1, {}), Job("7", 3, 5e9));
  EXPECT_EQ(s.host.memory_limit_bytes, 8e9);
  EXPECT_EQ(s.job.cpu_cores, 3);
  EXPECT_DOUBLE_EQ(s.job.memory_util_ratio.value_or(-1), 0.5);
  ASSERT_EQ(s.gpus.size(), 1U);
  EXPECT_EQ(s.gpus[0].index, 1);
  EXPECT_EQ(s.gpus[0].job_memory_bytes, 5e9);
  EXPECT_EQ(s.gpus[0].job_sm_util_ratio, 0.25);
  EXPECT_EQ(s.gpus[0].util_ratio, 0.9);  // the device's own figures stay
  NodeJob idle = Job("8", 0, 0);
  idle.gpus[0].processes = 0;
  idle.gpus[0].memory_bytes.reset();
  Sample held = JobSampleOf(Node(1, {}), idle);
  EXPECT_EQ(held.gpus[0].job_memory_bytes, 0);
  EXPECT_EQ(held.gpus[0].job_sm_util_ratio, 0);
}

TEST(Fleet, RowsPerJobTheirEndAndTheirLinger) {
  Fleet fleet(FleetOptions{.linger_s = 5, .max_jobs = 8});
  std::vector<Event> events;
  fleet.OnSample(Node(101, {Job("7", 2, 5e9)}), &events);
  fleet.OnSample(Node(102, {Job("7", 4, 5e9)}), &events);
  Row row;
  row.t = 102;
  fleet.OnRow(&row, &events);
  ASSERT_EQ(row.jobs.size(), 1U);
  const JobRow& job = *row.jobs[0];
  EXPECT_EQ(job.identity->job, "7");
  EXPECT_FALSE(job.ended_t.has_value());
  EXPECT_DOUBLE_EQ(FindStat(metric::kJobCpuCores, job.row.values)->mean, 3);
  ASSERT_EQ(job.allocated, (std::vector<bool>{true}));

  fleet.OnSample(Node(103, {}), &events);
  row = Row{};
  row.t = 103;
  fleet.OnRow(&row, &events);
  ASSERT_EQ(row.jobs.size(), 1U);
  EXPECT_EQ(row.jobs[0]->ended_t, 103);
  EXPECT_DOUBLE_EQ(FindStat(metric::kJobCpuCores, row.jobs[0]->row.values)->mean, 3);
  row = Row{};
  row.t = 109;
  fleet.OnRow(&row, &events);
  EXPECT_TRUE(row.jobs.empty());
}

TEST(Fleet, CountsTheJobsBeyondItsMostOnce) {
  Fleet fleet(FleetOptions{.linger_s = 5, .max_jobs = 1});
  std::vector<Event> events;
  for (double t : {101, 102, 103})
    fleet.OnSample(Node(t, {Job("7", 1, {}), Job("8", 1, {})}), &events);
  Row row;
  row.t = 103;
  fleet.OnRow(&row, &events);
  ASSERT_EQ(row.jobs.size(), 1U);
  EXPECT_EQ(row.jobs_dropped, 1U);
}

TEST(Fleet, ServedSeriesCarryTheJobAloneAndItsIdentityOnce) {
  Fleet fleet(FleetOptions{});
  std::vector<Event> events;
  fleet.OnSample(Node(101, {Job("7", 2, 5e9)}), &events);
  Row row;
  row.t = 101;
  fleet.OnRow(&row, &events);
  PromLabels labels;
  labels.host = "node1";
  labels.node = true;
  std::string text = RenderPrometheus(row, labels, PromFormat::kText004);
  EXPECT_NE(text.find("trainvitals_job_info{host=\"node1\",job=\"7\",kind=\"slurm\",user=\"alice\","
                      "node=\"node1\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("trainvitals_job_cpu_cores{host=\"node1\",job=\"7\"} 2\n"),
            std::string::npos);
  EXPECT_NE(
      text.find(
          "trainvitals_gpu_job_memory_bytes{host=\"node1\",job=\"7\",gpu=\"1\"} 5000000000\n"),
      std::string::npos);
  EXPECT_NE(text.find("trainvitals_job_gpu_allocated{host=\"node1\",job=\"7\",gpu=\"1\"} 1\n"),
            std::string::npos);
  EXPECT_NE(text.find("trainvitals_jobs{host=\"node1\",state=\"running\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("trainvitals_jobs_dropped_total{host=\"node1\"} 0\n"), std::string::npos);
  EXPECT_EQ(text.find("process_memory_bytes"), std::string::npos);
}

TEST(Fleet, ASessionsTrainingAndJudgementAreServedUnderItsJob) {
  FleetOptions options;
  options.thresholds = ThresholdsFrom({{"warmup_s", 2, ""}});
  Fleet fleet(options);
  std::vector<Event> events;
  NodeJob job = Job("7", 2, 5e9);
  JobSession& session = job.sessions.emplace_back();
  session.pid = 4242;
  session.name = "train";
  session.mode = "run";
  session.health_score = 55;
  session.findings = {{"input-bound", "warning"}};
  session.step = 1200;
  session.steps_per_second = 3.5;
  session.data_wait_ratio = 0.4;
  Row row;
  for (int t = 101; t <= 106; ++t) {
    fleet.OnSample(Node(t, {job}), &events);
    row = Row{};
    row.t = t;
    fleet.OnRow(&row, &events);
  }
  PromLabels labels;
  labels.host = "node1";
  labels.node = true;
  std::string text = RenderPrometheus(row, labels, PromFormat::kText004);
  for (std::string_view want :
       {"trainvitals_job_session_info{host=\"node1\",job=\"7\",session=\"4242\",run=\"train\","
        "mode=\"run\"} 1\n",
        "trainvitals_training_step{host=\"node1\",job=\"7\",session=\"4242\"} 1200\n",
        "trainvitals_training_steps_per_second{host=\"node1\",job=\"7\",session=\"4242\"} 3.5\n",
        "trainvitals_training_data_wait_ratio{host=\"node1\",job=\"7\",session=\"4242\"} 0.4\n",
        // The session's judgement, made with its markers, over the agent's.
        "trainvitals_health_score{host=\"node1\",job=\"7\"} 55\n",
        "trainvitals_finding_active{host=\"node1\",job=\"7\",finding=\"input-bound\","
        "severity=\"warning\"} 1\n"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
  EXPECT_EQ(text.find("trainvitals_training_epoch"), std::string::npos) << "it said none";
  ASSERT_EQ(row.jobs.size(), 1U);
  ASSERT_TRUE(row.jobs[0]->row.health_score.has_value());
  EXPECT_GT(*row.jobs[0]->row.health_score, 90) << "the agent's own judgement stays its own";
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

TEST(Fleet, JudgesEachJobByTheRulesOfARun) {
  FleetOptions options;
  options.thresholds = ThresholdsFrom({{"warmup_s", 2, ""}, {"gpu_unused_s", 4, ""}});
  Fleet fleet(options);
  std::vector<Event> events;
  std::vector<Event> opened;
  Row row;
  for (int t = 101; t <= 112; ++t) {
    NodeJob idle = Job("9", 0.1, 5e9);
    idle.gpus[0].sm_util_ratio = 0;
    Sample node = Node(t, {idle, Job("10", 1, {})});
    node.gpus[1].util_ratio = 0;
    fleet.OnSample(node, &events);
    row = Row{};
    row.t = t;
    fleet.OnRow(&row, &events);
  }
  for (const Event& e : events) {
    if (e.type == EventType::kFindingOpen) opened.push_back(e);
  }
  ASSERT_EQ(opened.size(), 1U);
  EXPECT_EQ(opened[0].fields["id"], "gpu-unused");
  EXPECT_EQ(opened[0].fields["job"], "9");
  ASSERT_EQ(row.jobs.size(), 2U);  // by kind and name: "10" before "9"
  EXPECT_EQ(row.jobs[0]->identity->job, "10");
  EXPECT_TRUE(row.jobs[0]->row.findings.empty());
  EXPECT_EQ(row.jobs[0]->row.health_score, 100);
  ASSERT_EQ(row.jobs[1]->row.findings.size(), 1U);
  EXPECT_EQ(row.jobs[1]->row.findings[0].id, "gpu-unused");
}

}  // namespace
}  // namespace tv

namespace tv {
namespace {

TEST(JobBusyRatio, TheDevicesWhenAloneTheJobsOwnWhenShared) {
  GpuSample g;
  g.util_ratio = 0.8;
  g.job_processes = 1;
  EXPECT_EQ(JobBusyRatio(g), 0.8);
  g.sm_active_ratio = 0.6;
  EXPECT_EQ(JobBusyRatio(g), 0.6);
  g.other_processes = 3;
  EXPECT_DOUBLE_EQ(JobBusyRatio(g).value_or(-1), 0.15);  // a quarter of the processes
  g.job_sm_util_ratio = 0.5;
  EXPECT_EQ(JobBusyRatio(g), 0.5);
}

TEST(Fleet, CountsEachJobsGpuSecondsHeldAndBusyAndItsPeak) {
  Fleet fleet(FleetOptions{});
  std::vector<Event> events;
  Row row;
  for (int t = 101; t <= 110; ++t) {
    NodeJob job = Job("7", 1, 5e9);
    job.job.memory_bytes = t == 105 ? 6e9 : 4e9;
    fleet.OnSample(Node(t, {job}), &events);
    row = Row{};
    row.t = t;
    fleet.OnRow(&row, &events);
  }
  ASSERT_EQ(row.jobs.size(), 1U);
  EXPECT_DOUBLE_EQ(row.jobs[0]->gpu_held_seconds, 10);  // one GPU, ten 1 s samples
  EXPECT_DOUBLE_EQ(row.jobs[0]->gpu_busy_seconds, 9);   // at 90 %
  EXPECT_EQ(row.jobs[0]->memory_peak_bytes, 6e9);
}

}  // namespace
}  // namespace tv

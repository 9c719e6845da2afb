#include "sources/node_jobs.h"

#include <gtest/gtest.h>

#include <string>

namespace tv {
namespace {

using namespace std::string_literals;

constexpr std::string_view kSlurm = "/system.slice/slurmstepd.scope/job_42";
constexpr std::string_view kPod = "/kubepods/burstable/pod0f6e2c1a-7d1e-4b7a-9f0e-8d2a3c4b5e6f";

class NodeJobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.Set("/proc/self/mountinfo",
             "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n");
    Process(100, std::string(kSlurm) + "/step_0/user/task_0", 100,
            "SLURM_JOB_ID=42\0SLURM_JOB_USER=alice\0SLURM_JOB_ACCOUNT=ml\0"
            "SLURM_JOB_PARTITION=gpu\0SLURM_JOB_GPUS=1\0"s);
    Process(101, std::string(kSlurm) + "/step_0/user/task_1", 100, "");
    Process(200, std::string(kPod) + "/3b1c0e9f8a7d6c5b4a39", 200, "HOSTNAME=train-0\0"s);
    Process(300, "/kubepods/besteffort/pod99999999-0000-0000-0000-000000000000/abcdefabcdef", 300,
            "HOSTNAME=web-1\0"s);
    Process(390, "/", 390, "");
    Process(400, "/", 390, "");
    Process(401, "/", 390, "");
    Process(500, "/system.slice/trainvitals.service", 500, "");
    std::string job(std::string("/sys/fs/cgroup") + std::string(kSlurm));
    env_.Set(job + "/cpu.stat", "usage_usec 1000000\nuser_usec 1\n");
    env_.Set(job + "/memory.stat", "anon 100\nfile 50\ninactive_file 20\n");
    env_.Set(job + "/memory.current", "200\n");
    env_.Set(job + "/memory.max", "1000\n");
    env_.Set(job + "/cpu.max", "200000 100000\n");
    env_.Set(job + "/cgroup.procs", "100\n101\n");
  }
  void Process(int pid, const std::string& cgroup, int session, const std::string& environ) {
    std::string dir = "/proc/" + std::to_string(pid);
    env_.Set(dir + "/cgroup", "0::" + cgroup + "\n");
    env_.Set(dir + "/environ", environ);
    env_.Set(dir + "/status", "Name:\tpython\nUid:\t0\t0\t0\t0\n");
    env_.Set(dir + "/comm", "python\n");
    env_.Set(dir + "/stat", std::to_string(pid) + " (python) S 1 " + std::to_string(session) + " " +
                                std::to_string(session) +
                                " 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 100 10 1 2 3\n");
  }
  // A node with two GPUs: processes 200 and 400 use GPU 0.
  Sample Gpus() {
    Sample s;
    for (int i = 0; i < 2; ++i) {
      GpuSample& g = s.gpus.emplace_back();
      g.index = g.physical_index = i;
    }
    GpuProcessList& list = s.gpus[0].processes;
    list.items[0] = GpuProcess{.pid = 400, .memory_bytes = 2e9};
    list.items[1] = GpuProcess{.pid = 200, .memory_bytes = 1e9, .sm_util_ratio = 0.5};
    list.size = 2;
    return s;
  }
  static const NodeJob* Find(const Sample& s, std::string_view job) {
    for (const NodeJob& j : s.node_jobs) {
      if (j.identity->job == job) return &j;
    }
    return nullptr;
  }

  MemEnv env_;
};

TEST_F(NodeJobsTest, FindsEachJobAndServesThoseThatHoldAGpu) {
  NodeJobsSource source(&env_, 500);
  Sample s = Gpus();
  std::vector<Notice> notices;
  source.Read(Tick{1.0, true}, &s, &notices);
  env_.Set("/sys/fs/cgroup" + std::string(kSlurm) + "/cpu.stat", "usage_usec 1500000\n");
  s = Gpus();
  source.Read(Tick{2.0, true}, &s, &notices);
  std::string found;
  for (const NodeJob& j : s.node_jobs) found += j.identity->job + " ";
  ASSERT_EQ(s.node_jobs.size(), 3U) << found;

  const NodeJob* slurm = Find(s, "42");
  ASSERT_NE(slurm, nullptr);
  EXPECT_EQ(slurm->identity->kind, "slurm");
  EXPECT_EQ(slurm->identity->user, "alice");
  EXPECT_EQ(slurm->identity->account, "ml");
  EXPECT_EQ(slurm->identity->partition, "gpu");
  EXPECT_EQ(slurm->pids, (std::vector<int>{100, 101}));
  EXPECT_EQ(slurm->job.processes, 2);
  EXPECT_DOUBLE_EQ(slurm->job.cpu_cores.value_or(-1), 0.5);
  EXPECT_EQ(slurm->job.memory_bytes, 180);  // 200 charged less 20 inactive cache
  EXPECT_EQ(slurm->job.memory_anon_bytes, 100);
  EXPECT_EQ(slurm->memory_limit_bytes, 1000);
  EXPECT_EQ(slurm->cpu_limit_cores, 2);
  ASSERT_EQ(slurm->gpus.size(), 1U);  // given GPU 1, uses none
  EXPECT_EQ(slurm->gpus[0].gpu, 1U);
  EXPECT_TRUE(slurm->gpus[0].allocated);
  EXPECT_EQ(slurm->gpus[0].processes, 0);

  const NodeJob* pod = Find(s, "0f6e2c1a-7d1e-4b7a-9f0e-8d2a3c4b5e6f");
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->identity->kind, "kubernetes");
  EXPECT_EQ(pod->identity->pod, "train-0");
  EXPECT_EQ(pod->identity->container, "3b1c0e9f8a7d");
  ASSERT_EQ(pod->gpus.size(), 1U);
  EXPECT_EQ(pod->gpus[0].memory_bytes, 1e9);
  EXPECT_EQ(pod->gpus[0].sm_util_ratio, 0.5);
  EXPECT_FALSE(pod->gpus[0].allocated);

  const NodeJob* tree = Find(s, "tree-390");
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(tree->identity->user, "root");
  EXPECT_EQ(tree->pids, (std::vector<int>{390, 400, 401}));
  EXPECT_EQ(tree->gpus[0].memory_bytes, 2e9);
  EXPECT_FALSE(tree->job.cpu_cores.has_value());  // no cgroup of its own
}

TEST_F(NodeJobsTest, AJobEndsWhenItsProcessesAreGoneAndTheAgentIsNeverAJob) {
  env_.Set("/proc/500/cgroup", "0::" + std::string(kPod) + "/3b1c0e9f8a7d6c5b4a39\n");
  NodeJobsSource source(&env_, 500);
  Sample s = Gpus();
  std::vector<Notice> notices;
  source.Read(Tick{1.0, true}, &s, &notices);
  EXPECT_EQ(Find(s, "0f6e2c1a-7d1e-4b7a-9f0e-8d2a3c4b5e6f"), nullptr);  // the agent's own pod
  ASSERT_NE(Find(s, "42"), nullptr);
  for (int pid : {100, 101}) {
    for (const char* file : {"cgroup", "environ", "status", "comm", "stat"}) {
      env_.Remove("/proc/" + std::to_string(pid) + "/" + file);
    }
  }
  s = Gpus();
  source.Read(Tick{2.0, true}, &s, &notices);
  EXPECT_EQ(Find(s, "42"), nullptr);
}

TEST_F(NodeJobsTest, SaysOnceWhenNoEnvironmentCanBeRead) {
  for (int pid : {100, 101}) env_.Deny("/proc/" + std::to_string(pid) + "/environ");
  NodeJobsSource source(&env_, 500);
  std::vector<Notice> notices;
  for (int t = 1; t <= 12; ++t) {
    Sample s = Gpus();
    source.Read(Tick{static_cast<double>(t), true}, &s, &notices);
    const NodeJob* slurm = Find(s, "42");
    ASSERT_NE(slurm, nullptr);
    EXPECT_EQ(slurm->identity->account, "");
  }
  ASSERT_EQ(notices.size(), 1U);
  EXPECT_NE(notices[0].message.find("environment of job 42"), std::string::npos);
}

}  // namespace
}  // namespace tv

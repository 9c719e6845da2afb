#include "run/run_job.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace tv::run_job_test {
namespace {

using namespace std::string_literals;

constexpr double kStart = 1796047509.9;  // 2026-11-30T14:05:09.9Z

std::optional<JobIdentity> Derive(EnvironPairs env, std::vector<std::string> command = {"sh"},
                                  std::string given = "") {
  return DeriveRunJob({std::move(given), std::move(env), std::move(command), kStart});
}

// The job's id and kind, "" when none.
std::string IdOf(const std::optional<JobIdentity>& job) {
  return job ? job->kind + " " + job->job : "";
}

TEST(DeriveRunJob, JobIdWinsOverEverythingElse) {
  auto job = Derive({{"SLURM_JOB_ID", "4242"},
                     {"TORCHELASTIC_RUN_ID", "elastic-1"},
                     {"MASTER_ADDR", "10.0.0.1"},
                     {"MASTER_PORT", "29500"}},
                    {"torchrun", "--rdzv-id", "r1", "train.py"}, "exp-7");
  EXPECT_EQ(IdOf(job), "given exp-7");
  EXPECT_EQ(job->account, "") << "Slurm's fields go with Slurm's id only";
}

TEST(DeriveRunJob, SlurmJobIdWithItsUserAccountPartitionAndName) {
  auto job = Derive({{"SLURM_JOB_ID", "4242"},
                     {"SLURM_JOB_USER", "carol"},
                     {"SLURM_JOB_ACCOUNT", "physics"},
                     {"SLURM_JOB_PARTITION", "a100"},
                     {"SLURM_JOB_NAME", "train.sh"},
                     {"TORCHELASTIC_RUN_ID", "elastic-1"},
                     {"MASTER_ADDR", "10.0.0.1"},
                     {"MASTER_PORT", "29500"}});
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(IdOf(job), "slurm 4242");
  EXPECT_EQ(job->user, "carol");
  EXPECT_EQ(job->account, "physics");
  EXPECT_EQ(job->partition, "a100");
  EXPECT_EQ(job->name, "train.sh");
}

TEST(DeriveRunJob, TorchelasticRunIdFromTheEnvironmentThenTheLauncher) {
  EXPECT_EQ(IdOf(Derive({{"TORCHELASTIC_RUN_ID", "elastic-1"},
                         {"MASTER_ADDR", "10.0.0.1"},
                         {"MASTER_PORT", "29500"}},
                        {"torchrun", "--rdzv-id", "r1", "train.py"})),
            "torchelastic elastic-1");
  // The launcher's run id names the job before any rendezvous address does.
  EXPECT_EQ(IdOf(Derive({{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}},
                        {"torchrun", "--rdzv-id", "r1", "train.py"})),
            "torchelastic r1");
  for (std::vector<std::string> argv : {
           std::vector<std::string>{"torchrun", "--rdzv_id", "r1", "train.py"},
           std::vector<std::string>{"torchrun", "--rdzv-id=r1", "train.py"},
           std::vector<std::string>{"torchrun", "--rdzv_id=r1", "train.py"},
       }) {
    EXPECT_EQ(IdOf(Derive({}, argv)), "torchelastic r1") << argv[1];
  }
}

TEST(DeriveRunJob, NoneIsTorchrunsDefaultAndNamesNoRun) {
  EXPECT_EQ(IdOf(Derive({{"TORCHELASTIC_RUN_ID", "none"},
                         {"MASTER_ADDR", "10.0.0.1"},
                         {"MASTER_PORT", "29500"}})),
            "rendezvous 10.0.0.1:29500@2026-11-30T14:05Z");
  EXPECT_EQ(IdOf(Derive({}, {"torchrun", "--rdzv-id", "none", "--rdzv-endpoint", "node0:29400",
                             "train.py"})),
            "rendezvous node0:29400@2026-11-30T14:05Z");
  EXPECT_EQ(IdOf(Derive({{"TORCHELASTIC_RUN_ID", "none"}}, {"torchrun", "--rdzv_id=none", "t.py"})),
            "");
}

TEST(DeriveRunJob, RendezvousAddressAndTheRunsStartMinute) {
  auto job = Derive({{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}});
  EXPECT_EQ(IdOf(job), "rendezvous 10.0.0.1:29500@2026-11-30T14:05Z");
  // Both or nothing.
  EXPECT_EQ(IdOf(Derive({{"MASTER_ADDR", "10.0.0.1"}})), "");
  EXPECT_EQ(IdOf(Derive({{"MASTER_PORT", "29500"}})), "");
  // The environment before the launcher's options.
  EXPECT_EQ(IdOf(Derive({{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}},
                        {"torchrun", "--rdzv-endpoint", "node0:29400", "train.py"})),
            "rendezvous 10.0.0.1:29500@2026-11-30T14:05Z");
}

TEST(DeriveRunJob, RendezvousFromTheLaunchersOptionsInEverySpelling) {
  const std::string minute = "@2026-11-30T14:05Z";
  for (std::vector<std::string> argv : {
           std::vector<std::string>{"torchrun", "--rdzv-endpoint", "node0:29400", "t.py"},
           std::vector<std::string>{"torchrun", "--rdzv_endpoint=node0:29400", "t.py"},
           std::vector<std::string>{"torchrun", "--nnodes", "2", "--master-addr", "node0",
                                    "--master-port", "29400", "t.py"},
           std::vector<std::string>{"torchrun", "--master_addr=node0", "--master_port=29400",
                                    "t.py"},
           // The endpoint before the static rendezvous' address.
           std::vector<std::string>{"torchrun", "--master-addr", "other", "--master-port", "1",
                                    "--rdzv-endpoint", "node0:29400", "t.py"},
       }) {
    EXPECT_EQ(IdOf(Derive({}, argv)), "rendezvous node0:29400" + minute) << argv[1];
  }
  // An address without a port names nothing.
  EXPECT_EQ(IdOf(Derive({}, {"torchrun", "--master-addr", "node0", "t.py"})), "");
}

TEST(DeriveRunJob, NothingNamesAJob) {
  EXPECT_FALSE(Derive({}).has_value());
  EXPECT_FALSE(Derive({{"SLURM_JOB_ID", ""}, {"GROUP_RANK", "1"}}).has_value());
}

TEST(DeriveRunJob, TheNodesRankFromTheLauncherThenGroupRankThenSlurm) {
  EnvironPairs env = {{"MASTER_ADDR", "n0"}, {"MASTER_PORT", "1"}};
  EXPECT_FALSE(Derive(env)->node_rank.has_value());
  EXPECT_EQ(Derive(env, {"torchrun", "--node-rank", "1", "t.py"})->node_rank, 1);
  EXPECT_EQ(Derive(env, {"torchrun", "--node_rank=3", "t.py"})->node_rank, 3);
  env.emplace_back("SLURM_NODEID", "5");
  EXPECT_EQ(Derive(env)->node_rank, 5);
  env.emplace_back("GROUP_RANK", "4");
  EXPECT_EQ(Derive(env)->node_rank, 4);
  EXPECT_EQ(Derive(env, {"torchrun", "--node-rank", "1", "t.py"})->node_rank, 1);
  EXPECT_EQ(Derive({{"SLURM_JOB_ID", "7"}, {"GROUP_RANK", "x"}})->node_rank, std::nullopt);
  EXPECT_EQ(Derive({}, {"torchrun", "--node-rank", "-1", "t.py"}, "j")->node_rank, std::nullopt);
}

TEST(TorchrunArgs, FindsTheLauncherByItsProgramOrModule) {
  for (std::vector<std::string> argv : {
           std::vector<std::string>{"torchrun", "--rdzv-id", "r1", "t.py"},
           std::vector<std::string>{"/opt/venv/bin/torchrun", "--rdzv-id", "r1", "t.py"},
           std::vector<std::string>{"python", "-m", "torch.distributed.run", "--rdzv-id", "r1",
                                    "t.py"},
           std::vector<std::string>{"/usr/bin/python3.12", "-u", "-X", "dev", "-m",
                                    "torch.distributed.run", "--rdzv-id", "r1", "t.py"},
           std::vector<std::string>{"python3", "-mtorch.distributed.run", "--rdzv-id", "r1",
                                    "t.py"},
           std::vector<std::string>{"python3", "-m", "torch.distributed.launch", "--use_env",
                                    "--rdzv_id", "r1", "t.py"},
       }) {
    std::optional<LauncherArgs> args = TorchrunArgs(argv);
    ASSERT_TRUE(args.has_value()) << argv[0];
    EXPECT_EQ(args->rdzv_id, "r1") << argv[0];
  }
  for (std::vector<std::string> argv : {
           std::vector<std::string>{},
           std::vector<std::string>{"python", "train.py", "--rdzv-id", "r1"},
           std::vector<std::string>{"python", "-c", "import torch", "--rdzv-id", "r1"},
           std::vector<std::string>{"python", "-m", "trainer", "--rdzv-id", "r1"},
           std::vector<std::string>{"sh", "-c", "torchrun --rdzv-id r1 t.py"},
           std::vector<std::string>{"pythonista", "-m", "torch.distributed.run"},
       }) {
    EXPECT_FALSE(TorchrunArgs(argv).has_value()) << (argv.empty() ? "" : argv[0]);
  }
}

TEST(TorchrunArgs, StopsAtTheTrainingScript) {
  // The script's own options are not the launcher's.
  std::optional<LauncherArgs> args =
      TorchrunArgs({"torchrun", "--nnodes", "2", "--nproc_per_node=8", "--standalone", "--rdzv-id",
                    "r1", "train.py", "--master_port", "1", "--node-rank", "9"});
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(args->master_port, "");
  EXPECT_EQ(args->node_rank, std::nullopt);
  EXPECT_EQ(args->rdzv_id, "") << "--standalone: torchrun makes its own rendezvous";
  // Switches take no value: the word after one is the next option.
  args =
      TorchrunArgs({"torchrun", "--no-python", "--node-rank", "2", "--", "bash", "--rdzv-id", "x"});
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(args->node_rank, 2);
  EXPECT_EQ(args->rdzv_id, "");
  args = TorchrunArgs({"torchrun", "-m", "--rdzv-id", "r1", "pkg.train"});
  ASSERT_TRUE(args.has_value());
  EXPECT_EQ(args->rdzv_id, "r1");
}

TEST(UtcMinute, IsTheMinuteInUtc) {
  EXPECT_EQ(UtcMinute(kStart), "2026-11-30T14:05Z");
  EXPECT_EQ(UtcMinute(1796047500.0), "2026-11-30T14:05Z");
  EXPECT_EQ(UtcMinute(1796047499.999), "2026-11-30T14:04Z");
  EXPECT_EQ(UtcMinute(0), "1970-01-01T00:00Z");
}

TEST(SessionEnviron, AttachReadsTheTargetsEnvironment) {
  MemEnv env;
  env.Set("/proc/42/environ",
          "PATH=/bin\0MASTER_ADDR=10.0.0.1\0MASTER_PORT=29500\0GROUP_RANK=1\0HOME=/x\0"s);
  EnvironPairs pairs = SessionEnviron("attach", 42, &env);
  EXPECT_EQ(
      pairs,
      (EnvironPairs{{"MASTER_ADDR", "10.0.0.1"}, {"MASTER_PORT", "29500"}, {"GROUP_RANK", "1"}}));
  auto job = DeriveRunJob({"", pairs, {"python", "train.py"}, kStart});
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(IdOf(job), "rendezvous 10.0.0.1:29500@2026-11-30T14:05Z");
  EXPECT_EQ(job->node_rank, 1);
  // Another user's process: its environment is not ours to read.
  env.Deny("/proc/43/environ");
  EXPECT_TRUE(SessionEnviron("attach", 43, &env).empty());
}

TEST(SessionEnviron, RunReadsItsOwnEnvironment) {
  const char* saved = std::getenv("TORCHELASTIC_RUN_ID");
  std::string before = saved != nullptr ? saved : "";
  ::setenv("TORCHELASTIC_RUN_ID", "elastic-9", 1);
  MemEnv env;  // not read: the environment is the process's own
  EnvironPairs pairs = SessionEnviron("run", ::getpid(), &env);
  if (saved != nullptr) {
    ::setenv("TORCHELASTIC_RUN_ID", before.c_str(), 1);
  } else {
    ::unsetenv("TORCHELASTIC_RUN_ID");
  }
  EXPECT_NE(std::find(pairs.begin(), pairs.end(),
                      std::pair<std::string, std::string>{"TORCHELASTIC_RUN_ID", "elastic-9"}),
            pairs.end());
}

}  // namespace
}  // namespace tv::run_job_test

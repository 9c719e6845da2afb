#include "run/node_sessions.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "core/metrics.h"
#include "sinks/live_file.h"

namespace tv {
namespace {

namespace fs = std::filesystem;

class NodeSessionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("tv-node-sessions-{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "root");
    fs::create_directories(dir_ / "proc");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Makes `path` (under the test's root) and its missing parents, each 0700 and `uid`'s.
  static void PrivateDirs(const fs::path& base, const fs::path& rel, uid_t uid) {
    fs::path at = base;
    for (const fs::path& part : rel) {
      at /= part;
      fs::create_directory(at);
      fs::permissions(at, fs::perms::owner_all);
      ASSERT_EQ(::chown(at.c_str(), uid, uid), 0);
    }
  }
  // A session of `uid` announcing itself in `sessions` (a directory), its
  // latest row at `row_t`: step 120 at 3.5 steps/s in epoch 2, waiting for
  // data 40% of the time, health 70, input-bound open.
  static void Announce(const fs::path& sessions, uid_t uid, int pid, int job_pid, double row_t) {
    LiveIdentity id;
    id.pid = pid;
    id.job_pid = job_pid;
    id.mode = "run";
    id.name = "train";
    Row row;
    row.t = row_t;
    row.values.resize(SampleMetrics().size());
    for (auto [metric, v] : {std::pair{metric::kTrainingStep, 120.0},
                             {metric::kTrainingStepsPerSecond, 3.5},
                             {metric::kTrainingEpoch, 2.0},
                             {metric::kTrainingDataWaitRatio, 0.4}}) {
      row.values[metric.index] = Stat{v, v, v, 1, v};
    }
    row.health_score = 70;
    row.findings.push_back(Row::Finding{"input-bound", "warning", true});
    LiveFile(sessions.string(), id).OnRow(row);
    ASSERT_EQ(::chown((sessions / fmt::format("{}.json", pid)).c_str(), uid, uid), 0);
  }
  // A process `pid` of `uid` in the test's /proc.
  void Process(int pid, uid_t uid) {
    fs::path p = dir_ / "proc" / std::to_string(pid);
    fs::create_directories(p);
    ASSERT_EQ(::chown(p.c_str(), uid, uid), 0);
  }
  static Sample NodeWith(double t, std::string kind, std::vector<int> pids) {
    Sample s;
    s.t = t;
    NodeJob& job = s.node_jobs.emplace_back();
    auto identity = std::make_shared<JobIdentity>();
    identity->kind = std::move(kind);
    identity->job = "77";
    job.identity = identity;
    job.pids = std::move(pids);
    return s;
  }
  std::vector<JobSession> Read(Sample s) {
    NodeSessionsSource source((dir_ / "root").string(), (dir_ / "proc").string());
    std::vector<Notice> notices;
    source.Read(Tick{}, &s, &notices);
    return s.node_jobs[0].sessions;
  }
  fs::path dir_;
};

TEST_F(NodeSessionsTest, ASessionJoinsTheJobOfItsProcessesWithItsOwnJudgement) {
  if (::geteuid() != 0) GTEST_SKIP() << "files of other users need root";
  PrivateDirs(dir_ / "root", "run/user/1000/trainvitals/sessions", 1000);
  Announce(dir_ / "root/run/user/1000/trainvitals/sessions", 1000, 4242, 5000, 100);
  Process(5000, 1000);
  std::vector<JobSession> sessions = Read(NodeWith(101, "slurm", {4242, 5000, 5001}));
  ASSERT_EQ(sessions.size(), 1U);
  EXPECT_EQ(sessions[0].pid, 4242);
  EXPECT_EQ(sessions[0].name, "train");
  EXPECT_EQ(sessions[0].mode, "run");
  EXPECT_EQ(sessions[0].step, 120);
  EXPECT_EQ(sessions[0].steps_per_second, 3.5);
  EXPECT_EQ(sessions[0].epoch, 2);
  EXPECT_EQ(sessions[0].data_wait_ratio, 0.4);
  EXPECT_EQ(sessions[0].health_score, 70);
  ASSERT_EQ(sessions[0].findings.size(), 1U);
  EXPECT_EQ(sessions[0].findings[0],
            (std::pair<std::string, std::string>{"input-bound", "warning"}));

  // Not another job's, not one that stopped announcing, not for another's job.
  EXPECT_TRUE(Read(NodeWith(101, "slurm", {6000})).empty());
  EXPECT_TRUE(Read(NodeWith(100 + NodeSessionsSource::kStale_s + 1, "slurm", {5000})).empty());
  Process(5000, 2000);
  EXPECT_TRUE(Read(NodeWith(101, "slurm", {5000})).empty()) << "its job is another user's";
}

TEST_F(NodeSessionsTest, OnlyTheUsersOwnDirectoriesAndFilesAreRead) {
  if (::geteuid() != 0) GTEST_SKIP() << "files of other users need root";
  Process(5000, 1000);
  // In /dev/shm, where a session without a runtime directory announces itself.
  PrivateDirs(dir_ / "root", "dev/shm", 0);
  fs::permissions(dir_ / "root/dev/shm", fs::perms::all | fs::perms::sticky_bit);
  PrivateDirs(dir_ / "root/dev/shm", "trainvitals-1000/sessions", 1000);
  fs::path sessions = dir_ / "root/dev/shm/trainvitals-1000/sessions";
  Announce(sessions, 1000, 4242, 5000, 100);
  EXPECT_EQ(Read(NodeWith(101, "slurm", {5000})).size(), 1U);
  // A file of another user's in it is not the user's word.
  ASSERT_EQ(::chown((sessions / "4242.json").c_str(), 1001, 1001), 0);
  EXPECT_TRUE(Read(NodeWith(101, "slurm", {5000})).empty());
  ASSERT_EQ(::chown((sessions / "4242.json").c_str(), 1000, 1000), 0);
  // A directory others may read is not a private sessions directory.
  fs::permissions(sessions, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  EXPECT_TRUE(Read(NodeWith(101, "slurm", {5000})).empty());
  fs::permissions(sessions, fs::perms::owner_all);
  // A link in place of the user's directory is not followed.
  fs::rename(dir_ / "root/dev/shm/trainvitals-1000", dir_ / "root/dev/shm/elsewhere");
  fs::create_directory_symlink(dir_ / "root/dev/shm/elsewhere",
                               dir_ / "root/dev/shm/trainvitals-1000");
  EXPECT_TRUE(Read(NodeWith(101, "slurm", {5000})).empty());
}

TEST_F(NodeSessionsTest, AContainersSessionsAreInItsOwnFileSystem) {
  if (::geteuid() != 0) GTEST_SKIP() << "files of other users need root";
  // The container's root, as /proc/PID/root shows it; PIDs there are its own.
  fs::path container = dir_ / "container";
  PrivateDirs(dir_, "container/tmp", 0);
  PrivateDirs(container / "tmp", "trainvitals-0/sessions", 0);
  Announce(container / "tmp/trainvitals-0/sessions", 0, 7, 8, 100);
  Process(9000, 0);
  fs::create_directory_symlink(container, dir_ / "proc/9000/root");
  std::vector<JobSession> sessions = Read(NodeWith(101, "kubernetes", {9000}));
  ASSERT_EQ(sessions.size(), 1U);
  EXPECT_EQ(sessions[0].pid, 7);
  EXPECT_TRUE(Read(NodeWith(101, "slurm", {9000})).empty()) << "a host job's are on the host";
}

}  // namespace
}  // namespace tv

#include "run/top_feed.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/metrics.h"
#include "run/live_dir.h"
#include "sinks/live_file.h"

namespace tv::top_feed_test {
namespace {
namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/tv_top_" + name + std::to_string(::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

Row TrainingRow() {
  Row row;
  row.t = 1800000000;
  row.values.resize(SampleMetrics().size());
  row.values[metric::kTrainingStepsPerSecond.index] = Stat{12.5, 13, 12.5, 10};
  row.values[metric::kTrainingDataWaitRatio.index] = Stat{0.25, 0.3, 0.25, 10};
  row.values[metric::kTrainingStep.index] = Stat{900, 900, 900, 10};
  row.health_score = 71;
  row.findings = {{"input-bound", "warning", true}, {"cpu-bound", "info", false}};
  row.alerts = {{"gpu-idle", "critical", 1, true}};
  return row;
}

TEST(TopFeed, ReadsTheAnnouncedSessionAndMarksItsJobsProcesses) {
  std::string dir = FreshDir("sessions");
  LiveIdentity id{::getpid(), ::getpid(), "python", "tiny", {"python", "train.py"},
                  "/runs/x",  1799999990, 1};
  LiveFile live(dir, id);
  live.OnRow(TrainingRow());
  struct stat st {};
  ASSERT_EQ(::stat(live.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // what a job runs is the user's to see
  pid_t child = ::fork();
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  TopFeed feed(false, dir);
  TopModel model = feed.Next();
  ASSERT_EQ(model.sessions.size(), 1u);
  const TopSession& s = model.sessions[0];
  EXPECT_EQ(s.pid, ::getpid());
  EXPECT_EQ(s.mode, "python");
  EXPECT_EQ(s.name, "tiny");
  EXPECT_EQ(s.command, "python train.py");
  EXPECT_EQ(s.steps_per_second, 12.5);
  EXPECT_EQ(s.data_wait_ratio, 0.25);
  EXPECT_EQ(s.step, 900);
  EXPECT_EQ(s.health_score, 71);
  EXPECT_EQ(s.findings, std::vector<std::string>{"input-bound (warning)"});  // open ones only
  EXPECT_EQ(s.alerts, std::vector<std::string>{"gpu-idle (critical) GPU 1"});
  EXPECT_TRUE(s.worst_critical);
  bool self = false, forked = false;
  for (const TopProcess& p : model.processes) {
    if (p.pid == ::getpid()) self = p.session == 0;
    if (p.pid == child) forked = p.session == 0 && p.ppid == ::getpid();
  }
  EXPECT_TRUE(self);
  EXPECT_TRUE(forked);  // a child of the job is the job's
  model = feed.Next();  // the second reading has each process's CPU
  for (const TopProcess& p : model.processes) EXPECT_TRUE(p.cpu_cores.has_value()) << p.pid;
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  live.OnClose();
  EXPECT_FALSE(fs::exists(live.path()));  // gone when the run ends
  EXPECT_TRUE(feed.Next().sessions.empty());
}

TEST(TopFeed, AStaleAnnouncementIsRemovedAndABrokenOneSkipped) {
  std::string dir = FreshDir("stale");
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  std::ofstream(dir + "/" + std::to_string(gone) + ".json")
      << R"({"version":1,"pid":)" << gone << R"(,"job_pid":1,"row":{}})";
  std::ofstream(dir + "/7.json") << R"({"pid": "seven"})";
  std::ofstream(dir + "/8.json") << "{half";
  TopFeed feed(false, dir);
  EXPECT_TRUE(feed.Next().sessions.empty());
  EXPECT_FALSE(fs::exists(dir + "/" + std::to_string(gone) + ".json"));
  EXPECT_TRUE(fs::exists(dir + "/8.json"));  // not ours to judge: left alone
}

TEST(LiveSessionsDir, IsMadePrivateAndRefusedWhenItIsNot) {
  std::string runtime = FreshDir("runtime");
  ::chmod(runtime.c_str(), 0700);
  const char* before = std::getenv("XDG_RUNTIME_DIR");
  std::string saved = before != nullptr ? before : "";
  ::setenv("XDG_RUNTIME_DIR", runtime.c_str(), 1);
  std::string error;
  EXPECT_EQ(LiveSessionsDir(false, &error), "");  // not made unless asked
  std::string dir = LiveSessionsDir(true, &error);
  EXPECT_EQ(dir, runtime + "/trainvitals/sessions") << error;
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ::chmod(dir.c_str(), 0755);
  EXPECT_EQ(LiveSessionsDir(true, &error), "");
  EXPECT_NE(error.find("not a directory private to this user"), std::string::npos) << error;
  if (before != nullptr) {
    ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_RUNTIME_DIR");
  }
}

}  // namespace
}  // namespace tv::top_feed_test

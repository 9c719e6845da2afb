// Where `run` makes the job's own cgroup: beside nothing, under trainvitals'
// own cgroup in each hierarchy it is in.
#include "run/job_cgroup.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "sources/fixture.h"

namespace tv::job_cgroup_test {
namespace {

using Kind = JobCgroupPlace::Kind;
using test_fixtures::Fixture;

TEST(PlanJobCgroup, HybridTakesTheUnifiedAndTheV1CpuacctAndMemoryHierarchies) {
  std::vector<MountInfo> m = ParseMountInfo(Fixture("proc/mountinfo_hybrid"));
  std::vector<ProcCgroupLine> c = ParseProcCgroup(
      "9:name=systemd:/\n6:devices:/\n4:memory:/process_api/7245\n3:cpuset:/\n"
      "2:cpu,cpuacct:/user/1000\n0::/user/1000\n");
  std::vector<JobCgroupPlace> places = PlanJobCgroup(m, c);
  ASSERT_EQ(places.size(), 3u);
  EXPECT_EQ(places[0].kind, Kind::kUnified);
  EXPECT_EQ(places[0].parent, "/sys/fs/cgroup/unified/user/1000");
  EXPECT_EQ(places[1].kind, Kind::kCpuacct);
  EXPECT_EQ(places[1].parent, "/sys/fs/cgroup/cpu,cpuacct/user/1000");
  EXPECT_EQ(places[2].kind, Kind::kMemory);
  EXPECT_EQ(places[2].parent, "/sys/fs/cgroup/memory/process_api/7245");
}

TEST(PlanJobCgroup, UnifiedOnlyTakesOnePlace) {
  std::vector<MountInfo> m = ParseMountInfo(Fixture("proc/mountinfo_v2"));
  std::vector<JobCgroupPlace> places =
      PlanJobCgroup(m, ParseProcCgroup("0::/user.slice/user-1000.slice/session-3.scope\n"));
  ASSERT_EQ(places.size(), 1u);
  EXPECT_EQ(places[0].kind, Kind::kUnified);
  EXPECT_EQ(places[0].parent, "/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope");
}

TEST(PlanJobCgroup, NoneWithoutACgroupMount) {
  EXPECT_TRUE(PlanJobCgroup({}, ParseProcCgroup("0::/\n")).empty());
}

TEST(JobCgroup, NothingMadeEntersNothingAndRemovesNothing) {
  JobCgroup none;
  EXPECT_EQ(none.size(), 0u);
  EXPECT_EQ(none.EnterFromChild(0), 0u);
  EXPECT_EQ(none.unified_fd(), -1);
  EXPECT_EQ(none.unified_bit(), 0u);
  EXPECT_TRUE(none.view().dirs.empty());
  EXPECT_EQ(none.Remove(), "");
}

// A PID no process has now: a child's, reaped.
int GonePid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

TEST(SweepStaleJobCgroups, RemovesOnlyTheEmptyOldOnesOfGoneRuns) {
  std::string pattern = (std::filesystem::temp_directory_path() / "tv-cgroups-XXXXXX").string();
  const std::string parent = ::mkdtemp(pattern.data());
  const time_t now = ::time(nullptr);
  auto age = [&](const std::string& name, time_t seconds) {
    timespec times[2] = {{now - seconds, 0}, {now - seconds, 0}};
    EXPECT_EQ(::utimensat(AT_FDCWD, (parent + "/" + name).c_str(), times, 0), 0) << name;
  };
  auto make = [&](const std::string& name, time_t seconds) {
    EXPECT_EQ(::mkdir((parent + "/" + name).c_str(), 0755), 0) << name;
    age(name, seconds);
  };
  const int gone = GonePid();
  make(fmt::format("trainvitals-{}", gone), 3600);              // stale: goes
  make(fmt::format("trainvitals-{}", ::getpid()), 3600);        // its run lives
  make(fmt::format("trainvitals-{}", gone + 100000000), 3600);  // no such PID: goes
  make(fmt::format("trainvitals-{}x", gone), 3600);             // not a job cgroup's name
  make(fmt::format("other-{}", gone), 3600);
  make("trainvitals-", 3600);
  const std::string recent = fmt::format("trainvitals-{}", GonePid());
  make(recent, 5);  // perhaps a run's in another PID namespace, ending now
  const std::string busy = fmt::format("trainvitals-{}", GonePid());
  make(busy, 3600);
  std::ofstream(parent + "/" + busy + "/held") << "a daemon the job left";
  age(busy, 3600);

  EXPECT_EQ(SweepStaleJobCgroups(parent, now), 2);
  std::set<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(parent)) {
    left.insert(e.path().filename().string());
  }
  EXPECT_EQ(left,
            (std::set<std::string>{fmt::format("trainvitals-{}", ::getpid()),
                                   fmt::format("trainvitals-{}x", gone),
                                   fmt::format("other-{}", gone), "trainvitals-", recent, busy}));
  EXPECT_EQ(SweepStaleJobCgroups(parent + "/missing", now), 0);
  std::filesystem::remove_all(parent);
}

}  // namespace
}  // namespace tv::job_cgroup_test

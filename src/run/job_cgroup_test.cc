// Where `run` makes the job's own cgroup: beside nothing, under trainvitals'
// own cgroup in each hierarchy it is in.
#include "run/job_cgroup.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tv::job_cgroup_test

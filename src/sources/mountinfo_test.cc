#include "sources/mountinfo.h"

#include <gtest/gtest.h>

#include "sources/fixture.h"

namespace tv::mountinfo_test {
namespace {

using test_fixtures::Fixture;

TEST(MountInfo, ParsesRootMountPointTypeAndSuperOptions) {
  std::vector<MountInfo> m = ParseMountInfo(Fixture("proc/mountinfo_hybrid"));
  ASSERT_EQ(m.size(), 11u);
  EXPECT_EQ(m[4].root, "/");
  EXPECT_EQ(m[4].mount_point, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(m[4].fs_type, "cgroup");
  EXPECT_EQ(m[4].super_options, "rw,cpu,cpuacct");
  EXPECT_EQ(m[9].fs_type, "cgroup2");
}

TEST(MountInfo, DecodesOctalEscapesInPaths) {
  std::vector<MountInfo> m = ParseMountInfo(Fixture("proc/mountinfo_hybrid"));
  EXPECT_EQ(m.back().mount_point, "/mnt/my data");
}

TEST(MountInfo, HandlesAnyNumberOfOptionalFields) {
  std::vector<MountInfo> m = ParseMountInfo(
      "1 0 0:1 /r /m rw - cgroup2 cgroup2 rw\n"
      "2 0 0:1 /r /m rw shared:1 master:2 propagate_from:3 - ext4 /dev/x rw\n");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].fs_type, "cgroup2");
  EXPECT_EQ(m[1].fs_type, "ext4");
  EXPECT_EQ(m[1].root, "/r");
}

TEST(MountInfo, SkipsTruncatedAndGarbageLines) {
  std::vector<MountInfo> m = ParseMountInfo(
      "1 0 0:1 / /m rw shared:1\n"   // no separator
      "1 0 0:1 / /m rw - cgroup2\n"  // no source
      "1 0 0:1 /\n"
      "\n\\\\\\ garbage - - -\n"
      "1 0 0:1 /trail\\04 /m\\ rw - tmpfs tmpfs rw\n");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].root, "/trail\\04");  // incomplete escape kept as is
  EXPECT_EQ(m[0].mount_point, "/m\\");
  EXPECT_TRUE(ParseMountInfo("").empty());
}

TEST(MountInfo, HasOptionMatchesWholeOptionsOnly) {
  EXPECT_TRUE(HasOption("rw,cpu,cpuacct", "cpu"));
  EXPECT_TRUE(HasOption("rw,cpuacct,cpu", "cpu"));
  EXPECT_FALSE(HasOption("rw,cpuacct,cpuset", "cpu"));
  EXPECT_FALSE(HasOption("", "cpu"));
  EXPECT_TRUE(HasOption("memory", "memory"));
}

}  // namespace
}  // namespace tv::mountinfo_test

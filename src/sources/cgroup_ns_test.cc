#include "sources/cgroup_ns.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

TEST(CgroupPathFrom, ClimbsFromTheBase) {
  EXPECT_EQ(CgroupPathFrom("/a/b/c", "/../../x/y"), "/a/x/y");
  EXPECT_EQ(CgroupPathFrom("/a/b", "/"), "/a/b");
  EXPECT_EQ(CgroupPathFrom("/a/b", "/../.."), "/");
  EXPECT_EQ(CgroupPathFrom("/", "/x"), "/x");
  EXPECT_EQ(CgroupPathFrom("/a", "/../../x"), std::nullopt);
}

// A container's namespace at /kubepods.slice/pod-a.slice/cri-a.scope, with
// the host's tree mounted whole at /host/cgroup (its root reads "/../../..")
// beside the container's own view at /sys/fs/cgroup.
class CgroupNamespaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* dir :
         {"/kubepods.slice/pod-a.slice/cri-a.scope", "/kubepods.slice/pod-b.slice/cri-b.scope",
          "/system.slice/x.service", "/init.scope"}) {
      env_.Set(std::string("/host/cgroup") + dir + "/memory.current", "1\n");
      env_.Set(std::string("/host/cgroup") + dir + "/cgroup.procs", "1\n7\n");
    }
    env_.Set("/host/cgroup/kubepods.slice/pod-a.slice/cri-a.scope/cgroup.procs", "5\n42\n");
    mounts_ = {
        {.root = "/", .mount_point = "/sys/fs/cgroup", .fs_type = "cgroup2", .super_options = "rw"},
        {.root = "/../../..",
         .mount_point = "/host/cgroup",
         .fs_type = "cgroup2",
         .super_options = "rw"}};
  }

  MemEnv env_;
  std::vector<MountInfo> mounts_;
};

TEST_F(CgroupNamespaceTest, PathsFromAPrivateNamespaceAreMadeWhole) {
  CgroupNamespace ns(&env_, &mounts_, 42);
  EXPECT_TRUE(ns.private_namespace());
  EXPECT_EQ(mounts_[0].root, "/kubepods.slice/pod-a.slice/cri-a.scope");
  EXPECT_EQ(mounts_[1].root, "/");
  EXPECT_TRUE(ns.unresolved().empty());
  ProcCgroupLine other{
      .hierarchy_id = 0, .controllers = "", .path = "/../../pod-b.slice/cri-b.scope"};
  ASSERT_TRUE(ns.Resolve(&other));
  EXPECT_EQ(other.path, "/kubepods.slice/pod-b.slice/cri-b.scope");
  ProcCgroupLine init{.hierarchy_id = 0, .controllers = "", .path = "/../../../init.scope"};
  ASSERT_TRUE(ns.Resolve(&init));
  EXPECT_EQ(init.path, "/init.scope");
  ProcCgroupLine self{.hierarchy_id = 0, .controllers = "", .path = "/"};
  ASSERT_TRUE(ns.Resolve(&self));
  EXPECT_EQ(self.path, "/kubepods.slice/pod-a.slice/cri-a.scope");
  // The job's directory now resolves in the host's tree.
  auto dir = ResolveCgroupDirIn(2, mounts_, {other}, "");
  ASSERT_TRUE(dir);
  EXPECT_EQ(dir->dir, "/host/cgroup/kubepods.slice/pod-b.slice/cri-b.scope");
}

TEST_F(CgroupNamespaceTest, WithoutTheWholeTreeAClimbingPathNamesNothing) {
  mounts_.pop_back();
  mounts_[0].root = "/../../..";  // the container's view only, of a tree it cannot see above it
  mounts_[0].mount_point = "/nowhere";
  CgroupNamespace ns(&env_, &mounts_, 42);
  EXPECT_TRUE(ns.private_namespace());
  ProcCgroupLine other{
      .hierarchy_id = 0, .controllers = "", .path = "/../../pod-b.slice/cri-b.scope"};
  EXPECT_FALSE(ns.Resolve(&other));
  EXPECT_EQ(ns.unresolved(), std::vector<std::string>{"cgroup2"});
}

TEST_F(CgroupNamespaceTest, TheHostsNamespaceReadsNothingAndChangesNothing) {
  mounts_.pop_back();
  MemEnv empty;
  CgroupNamespace ns(&empty, &mounts_, 42);
  EXPECT_FALSE(ns.private_namespace());
  EXPECT_TRUE(ns.unresolved().empty());
  EXPECT_EQ(mounts_[0].root, "/");
  ProcCgroupLine line{.hierarchy_id = 0, .controllers = "", .path = "/system.slice/x.service"};
  ASSERT_TRUE(ns.Resolve(&line));
  EXPECT_EQ(line.path, "/system.slice/x.service");
}

}  // namespace
}  // namespace tv

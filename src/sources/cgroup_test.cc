#include "sources/cgroup.h"

#include <gtest/gtest.h>

#include "sources/fixture.h"

namespace tv::cgroup_test {
namespace {

using test_fixtures::Fixture;

TEST(ProcCgroup, ParsesV1AndV2Lines) {
  std::vector<ProcCgroupLine> c = ParseProcCgroup(
      "9:name=systemd:/\n4:memory:/process_api/7245\n1:cpu,cpuacct:/\n0::/user.slice/a:b\n");
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[1].hierarchy_id, 4u);
  EXPECT_EQ(c[1].controllers, "memory");
  EXPECT_EQ(c[1].path, "/process_api/7245");
  EXPECT_EQ(c[3].controllers, "");
  EXPECT_EQ(c[3].path, "/user.slice/a:b");
}

TEST(ProcCgroup, SkipsGarbageLines) {
  std::vector<ProcCgroupLine> c =
      ParseProcCgroup("garbage\nx:memory:/\n4:memory\n4:memory:rel\n\n");
  EXPECT_TRUE(c.empty());
}

TEST(CgroupLimit, MemoryMaxAndHugeV1ValuesMeanUnlimited) {
  EXPECT_EQ(ParseMemoryLimit("max\n").limit, std::nullopt);
  EXPECT_TRUE(ParseMemoryLimit("max\n").ok);
  EXPECT_TRUE(ParseMemoryLimit("9223372036854771712\n").ok);
  EXPECT_FALSE(ParseMemoryLimit("9223372036854771712\n").limit);
  EXPECT_FALSE(ParseMemoryLimit("18446744073709551615\n").limit);
  EXPECT_EQ(ParseMemoryLimit("4294967296\n").limit, 4294967296.0);
  EXPECT_FALSE(ParseMemoryLimit("").ok);
  EXPECT_FALSE(ParseMemoryLimit("-1").ok);
  EXPECT_FALSE(ParseMemoryLimit("99999999999999999999999").ok);
}

TEST(CgroupLimit, CpuMaxGivesCores) {
  EXPECT_EQ(ParseCpuMax("250000 100000\n").limit, 2.5);
  ParsedLimit none = ParseCpuMax("max 100000\n");
  EXPECT_TRUE(none.ok);
  EXPECT_FALSE(none.limit);
  EXPECT_FALSE(ParseCpuMax("50000 0\n").ok);
  EXPECT_FALSE(ParseCpuMax("50000\n").ok);
  EXPECT_FALSE(ParseCpuMax("").ok);
}

TEST(CgroupLimit, CfsQuotaGivesCoresAndMinusOneIsUnlimited) {
  EXPECT_EQ(ParseCfsQuota("150000\n", "100000\n").limit, 1.5);
  EXPECT_TRUE(ParseCfsQuota("-1\n", "100000\n").ok);
  EXPECT_FALSE(ParseCfsQuota("-1\n", "100000\n").limit);
  EXPECT_FALSE(ParseCfsQuota("150000", "0").ok);
  EXPECT_FALSE(ParseCfsQuota("abc", "100000").ok);
}

TEST(ResolveCgroupDir, HybridPicksV1HierarchyOfTheController) {
  std::vector<MountInfo> m = ParseMountInfo(Fixture("proc/mountinfo_hybrid"));
  std::vector<ProcCgroupLine> c =
      ParseProcCgroup("4:memory:/process_api/7245\n2:cpu,cpuacct:/\n0::/\n");
  auto mem = ResolveCgroupDir(m, c, "memory");
  ASSERT_TRUE(mem);
  EXPECT_EQ(mem->version, 1);
  EXPECT_EQ(mem->dir, "/sys/fs/cgroup/memory/process_api/7245");
  EXPECT_EQ(mem->mount_point, "/sys/fs/cgroup/memory");
  auto cpu = ResolveCgroupDir(m, c, "cpu");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->dir, "/sys/fs/cgroup/cpu,cpuacct");
}

TEST(ResolveCgroupDir, UnifiedUsesTheV2Line) {
  std::vector<MountInfo> m = ParseMountInfo(Fixture("proc/mountinfo_v2"));
  std::vector<ProcCgroupLine> c = ParseProcCgroup("0::/system.slice/train.service\n");
  auto d = ResolveCgroupDir(m, c, "memory");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->version, 2);
  EXPECT_EQ(d->dir, "/sys/fs/cgroup/system.slice/train.service");
}

TEST(ResolveCgroupDir, MountShowingASubtreeStripsItsRoot) {
  std::vector<MountInfo> m = ParseMountInfo(Fixture("proc/mountinfo_docker_v1"));
  auto d = ResolveCgroupDir(m, ParseProcCgroup("5:memory:/docker/3f2a9c/sub\n"), "memory");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->dir, "/sys/fs/cgroup/memory/sub");
  // A path outside the mount's root (another namespace) maps to the mount point.
  d = ResolveCgroupDir(m, ParseProcCgroup("5:memory:/elsewhere\n"), "memory");
  EXPECT_EQ(d->dir, "/sys/fs/cgroup/memory");
  d = ResolveCgroupDir(m, ParseProcCgroup("5:memory:/docker/3f2a9c/../x\n"), "memory");
  EXPECT_EQ(d->dir, "/sys/fs/cgroup/memory");
}

TEST(ResolveCgroupDir, AbsentWithoutAMountOrALine) {
  std::vector<MountInfo> m = ParseMountInfo(Fixture("proc/mountinfo_v2"));
  EXPECT_FALSE(ResolveCgroupDir(m, ParseProcCgroup("4:memory:/a\n"), "memory"));
  EXPECT_FALSE(ResolveCgroupDir({}, ParseProcCgroup("0::/a\n"), "memory"));
}

TEST(CgroupChain, WalksUpToTheMountPoint) {
  std::vector<std::string> chain = CgroupChain({2, "/sys/fs/cgroup", "/sys/fs/cgroup/a/b"});
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[0], "/sys/fs/cgroup/a/b");
  EXPECT_EQ(chain[1], "/sys/fs/cgroup/a");
  EXPECT_EQ(chain[2], "/sys/fs/cgroup");
}

TEST(CgroupChain, HandlesAHierarchyMountedAtTheFileSystemRoot) {
  std::vector<MountInfo> m = ParseMountInfo("1 0 0:1 / / rw - cgroup2 cgroup2 rw\n");
  auto d = ResolveCgroupDir(m, ParseProcCgroup("0::/a/b\n"), "memory");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->dir, "/a/b");
  std::vector<std::string> chain = CgroupChain(*d);
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[1], "/a");
  EXPECT_EQ(chain[2], "/");
  d = ResolveCgroupDir(m, ParseProcCgroup("0::/\n"), "memory");
  EXPECT_EQ(d->dir, "/");
  EXPECT_EQ(CgroupChain(*d).size(), 1u);
}

// A v2 machine: the job sits in /sys/fs/cgroup/jobs/train with a parent limit
// tighter than its own.
void SetUpV2(MemEnv* env) {
  env->Set("/proc/self/mountinfo", Fixture("proc/mountinfo_v2"));
  env->Set("/proc/42/cgroup", "0::/jobs/train\n");
  env->Set("/sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
  env->Set("/sys/fs/cgroup/jobs/memory.max", "8589934592\n");
  env->Set("/sys/fs/cgroup/jobs/cpu.max", "max 100000\n");
  env->Set("/sys/fs/cgroup/jobs/train/memory.max", "max\n");
  env->Set("/sys/fs/cgroup/jobs/train/memory.current", "1073741824\n");
  env->Set("/sys/fs/cgroup/jobs/train/cpu.max", "400000 100000\n");
}

TEST(ReadCgroupLimits, V2TakesTheTightestOverAncestors) {
  MemEnv env;
  SetUpV2(&env);
  CgroupLimits l = ReadCgroupLimits(&env, 42);
  ASSERT_TRUE(l.memory);
  EXPECT_EQ(l.memory->version, 2);
  EXPECT_EQ(l.memory_limit_bytes, 8589934592.0);
  EXPECT_EQ(l.cpu_limit_cores, 4.0);
  EXPECT_EQ(l.memory_current_bytes, 1073741824.0);
}

// This machine's layout: memory on a v1 hierarchy, no limit anywhere.
void SetUpV1(MemEnv* env) {
  env->Set("/proc/self/mountinfo", Fixture("proc/mountinfo_hybrid"));
  env->Set("/proc/self/cgroup", "4:memory:/process_api/7245\n2:cpu,cpuacct:/\n0::/\n");
  env->Set("/sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  env->Set("/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes", "9223372036854771712\n");
  env->Set("/sys/fs/cgroup/memory/process_api/7245/memory.limit_in_bytes", "9223372036854771712\n");
  env->Set("/sys/fs/cgroup/memory/process_api/7245/memory.usage_in_bytes", "52428800\n");
  env->Set("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  env->Set("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
}

TEST(ReadCgroupLimits, V1HugeValuesAreUnlimited) {
  MemEnv env;
  SetUpV1(&env);
  CgroupLimits l = ReadCgroupLimits(&env, 0);
  ASSERT_TRUE(l.memory);
  EXPECT_EQ(l.memory->version, 1);
  EXPECT_FALSE(l.memory_limit_bytes);
  EXPECT_FALSE(l.cpu_limit_cores);
  EXPECT_EQ(l.memory_current_bytes, 52428800.0);
}

TEST(ReadCgroupLimits, V1LimitOnAParentAndCfsQuotaApply) {
  MemEnv env;
  SetUpV1(&env);
  env.Set("/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes", "2147483648\n");
  env.Set("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "150000\n");
  CgroupLimits l = ReadCgroupLimits(&env, 0);
  EXPECT_EQ(l.memory_limit_bytes, 2147483648.0);
  EXPECT_EQ(l.cpu_limit_cores, 1.5);
}

TEST(ReadCgroupLimits, MissingCgroupDirFallsBackToTheMountRoot) {
  MemEnv env;
  env.Set("/proc/self/mountinfo", Fixture("proc/mountinfo_v2"));
  env.Set("/proc/7/cgroup", "0::/not/in/this/namespace\n");
  env.Set("/sys/fs/cgroup/memory.max", "1000000\n");  // as a container's root shows it
  CgroupLimits l = ReadCgroupLimits(&env, 7);
  ASSERT_TRUE(l.memory);
  EXPECT_EQ(l.memory->dir, "/sys/fs/cgroup");
  EXPECT_EQ(l.memory_limit_bytes, 1000000.0);
}

TEST(ReadCgroupLimits, GarbageAndMissingFilesGiveNoLimits) {
  MemEnv env;
  SetUpV2(&env);
  env.Set("/sys/fs/cgroup/jobs/memory.max", "garbage\n");
  env.Set("/sys/fs/cgroup/jobs/train/cpu.max", "");
  env.Remove("/sys/fs/cgroup/jobs/train/memory.current");
  CgroupLimits l = ReadCgroupLimits(&env, 42);
  EXPECT_FALSE(l.memory_limit_bytes);
  EXPECT_FALSE(l.cpu_limit_cores);
  EXPECT_FALSE(l.memory_current_bytes);
  EXPECT_FALSE(ReadCgroupLimits(&env, 999).memory);  // no such process
}

TEST(CgroupSource, LowersHostLimitsAndNeverRaisesThem) {
  MemEnv env;
  SetUpV2(&env);
  CgroupSource source(&env, 42);
  std::vector<Notice> notices;
  Sample s;
  s.host.cpu_limit_cores = 2;  // fewer cores online than the quota
  source.Read({.mono_s = 0.1}, &s, &notices);
  EXPECT_EQ(s.host.cpu_limit_cores, 2.0);
  EXPECT_EQ(s.host.memory_limit_bytes, 8589934592.0);
  EXPECT_EQ(s.host.cgroup_memory_current_bytes, 1073741824.0);
  EXPECT_TRUE(notices.empty());
}

TEST(CgroupSource, RereadsLimitsOnARowTickTenSecondsAfterTheLastRead) {
  MemEnv env;
  SetUpV2(&env);
  CgroupSource source(&env, 42);
  std::vector<Notice> notices;
  Sample s;
  source.Read({.mono_s = 0.1}, &s, &notices);
  env.Set("/sys/fs/cgroup/jobs/memory.max", "4294967296\n");
  env.Set("/sys/fs/cgroup/jobs/train/memory.current", "2147483648\n");
  s = Sample{};
  source.Read({.mono_s = 0.2}, &s, &notices);
  EXPECT_EQ(s.host.memory_limit_bytes, 8589934592.0);
  EXPECT_EQ(s.host.cgroup_memory_current_bytes, 2147483648.0);
  s = Sample{};
  source.Read({.mono_s = 1.0, .row_tick = true}, &s, &notices);
  EXPECT_EQ(s.host.memory_limit_bytes, 8589934592.0);
  s = Sample{};
  source.Read({.mono_s = 10.1, .row_tick = true}, &s, &notices);
  EXPECT_EQ(s.host.memory_limit_bytes, 4294967296.0);
}

TEST(CgroupSource, NoControllerIsNoticedOnce) {
  MemEnv env;
  CgroupSource source(&env, 42);
  std::vector<Notice> notices;
  Sample s;
  source.Read({.mono_s = 0.1, .row_tick = true}, &s, &notices);
  source.Read({.mono_s = 1.1, .row_tick = true}, &s, &notices);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].message.find("/proc/42/cgroup"), std::string::npos);
  EXPECT_FALSE(s.host.memory_limit_bytes);
}

TEST(OomKills, ReadsTheCounterOfV1AndV2) {
  EXPECT_EQ(ParseOomKills("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"), 3u);
  EXPECT_EQ(ParseOomKills("low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n"), 1u);
  EXPECT_EQ(ParseOomKills("oom_group_kill 4\noom_kill 0\n"), 0u);
  EXPECT_FALSE(ParseOomKills("oom_kill_disable 0\nunder_oom 0\n"));  // before 4.13
  EXPECT_FALSE(ParseOomKills("oom_kill x\n"));
  EXPECT_FALSE(ParseOomKills(""));
}

TEST(OomKillWatch, CountsKillsSinceEachCgroupWasFollowed) {
  MemEnv env;
  env.Set("/sys/fs/cgroup/jobs/train/memory.events", "oom 1\noom_kill 2\n");
  OomKillWatch watch(&env);
  EXPECT_FALSE(watch.Read());  // nothing followed
  watch.Follow({2, "/sys/fs/cgroup", "/sys/fs/cgroup/jobs/train"});
  EXPECT_EQ(watch.Read()->count, 0u);  // kills before the run are not the run's
  env.Set("/sys/fs/cgroup/jobs/train/memory.events", "oom 2\noom_kill 3\n");
  watch.Follow({2, "/sys/fs/cgroup", "/sys/fs/cgroup/jobs/train"});  // already followed
  std::optional<OomKillWatch::Kills> k = watch.Read();
  ASSERT_TRUE(k);
  EXPECT_EQ(k->count, 1u);
  EXPECT_EQ(k->cgroup, "/sys/fs/cgroup/jobs/train");
  env.Remove("/sys/fs/cgroup/jobs/train/memory.events");  // the cgroup was removed
  EXPECT_FALSE(watch.Read());
  watch.Follow({2, "/sys/fs/cgroup", "/sys/fs/cgroup/gone"});  // unreadable: not followed
  EXPECT_FALSE(watch.Read());
}

TEST(CgroupSource, FollowsAJobThatMovesIntoItsOwnCgroup) {
  MemEnv env;
  SetUpV1(&env);
  env.Set("/proc/42/cgroup", "4:memory:/process_api/7245\n2:cpu,cpuacct:/\n0::/\n");
  env.Set("/sys/fs/cgroup/memory/process_api/7245/memory.oom_control",
          "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n");
  CgroupSource source(&env, 42);
  std::vector<Notice> notices;
  Sample s;
  source.Read({.mono_s = 0.1}, &s, &notices);
  EXPECT_FALSE(s.host.memory_limit_bytes);
  // The job makes a cgroup with a limit of its own and moves into it.
  const std::string own = "/sys/fs/cgroup/memory/trainvitals-test";
  env.Set("/proc/42/cgroup", "4:memory:/trainvitals-test\n2:cpu,cpuacct:/\n0::/\n");
  env.Set(own + "/memory.limit_in_bytes", "209715200\n");
  env.Set(own + "/memory.usage_in_bytes", "104857600\n");
  env.Set(own + "/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
  s = Sample{};
  source.Read({.mono_s = 0.2}, &s, &notices);  // not a row tick: not looked at yet
  EXPECT_FALSE(s.host.memory_limit_bytes);
  s = Sample{};
  source.Read({.mono_s = 1.0, .row_tick = true}, &s, &notices);
  EXPECT_EQ(s.host.memory_limit_bytes, 209715200.0);
  EXPECT_EQ(s.host.cgroup_memory_current_bytes, 104857600.0);
  // The kernel kills it there; the process is gone, its cgroup stays.
  env.Set(own + "/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
  env.Remove("/proc/42/cgroup");
  s = Sample{};
  source.Read({.mono_s = 2.0, .row_tick = true}, &s, &notices);
  EXPECT_EQ(s.host.memory_limit_bytes, 209715200.0);
  std::optional<OomKillWatch::Kills> k = source.oom_kills()->Read();
  ASSERT_TRUE(k);
  EXPECT_EQ(k->count, 1u);
  EXPECT_EQ(k->cgroup, own);
  EXPECT_TRUE(notices.empty());
}

}  // namespace
}  // namespace tv::cgroup_test

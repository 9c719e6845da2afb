// The job's totals from its own cgroup: the files of cgroup v2 and v1 parsed,
// turned into rates per second of the tick, and what is missing said once.
#include "sources/cgroup_usage.h"

#include <gtest/gtest.h>

#include "sources/fixture.h"

namespace tv::cgroup_usage_test {
namespace {

TEST(CgroupUsageParse, CpuStatUsage) {
  EXPECT_EQ(ParseCpuStatUsage("usage_usec 1234567\nuser_usec 1000000\nsystem_usec 234567\n"),
            1234567u);
  EXPECT_FALSE(ParseCpuStatUsage("user_usec 1\n"));
  EXPECT_FALSE(ParseCpuStatUsage("usage_usec lots\n"));
}

TEST(CgroupUsageParse, MemoryStatOfBothVersions) {
  MemorySplit v2 = ParseMemoryStat("anon 4096\nfile 8192\nkernel 100\nanon_thp 0\n", 2);
  EXPECT_EQ(v2.anon_bytes, 4096);
  EXPECT_EQ(v2.file_bytes, 8192);
  // v1: the hierarchical totals, not the cgroup's own rss and cache.
  MemorySplit v1 = ParseMemoryStat("cache 1\nrss 2\ntotal_cache 300\ntotal_rss 400\n", 1);
  EXPECT_EQ(v1.anon_bytes, 400);
  EXPECT_EQ(v1.file_bytes, 300);
  EXPECT_FALSE(ParseMemoryStat("", 2).anon_bytes);
}

TEST(CgroupUsageParse, PressureSomeTotal) {
  EXPECT_EQ(ParsePressureSome("some avg10=1.50 avg60=0.20 avg300=0.00 total=987654\n"
                              "full avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"),
            987654u);
  EXPECT_EQ(ParsePressureSome("full avg10=0 avg60=0 avg300=0 total=5\nsome avg10=0 total=9\n"), 9u);
  EXPECT_FALSE(ParsePressureSome("some avg10=0.00\n"));
}

TEST(CgroupUsageParse, ProcsDigestIsOfTheSetNotTheOrder) {
  EXPECT_EQ(ProcsDigest("10\n20\n30\n"), ProcsDigest("30\n10\n20\n"));
  EXPECT_NE(ProcsDigest("10\n20\n"), ProcsDigest("10\n20\n30\n"));
  EXPECT_NE(ProcsDigest("10\n21\n"), ProcsDigest("10\n20\n"));
  EXPECT_NE(ProcsDigest(""), ProcsDigest("0\n"));
}

void SetV2(MemEnv* env, uint64_t usage_usec, uint64_t cpu_stall_us) {
  env->Set("/cg/job/cpu.stat", "usage_usec " + std::to_string(usage_usec) + "\n");
  env->Set("/cg/job/cpu.pressure",
           "some avg10=0 avg60=0 avg300=0 total=" + std::to_string(cpu_stall_us) + "\n");
}

TEST(CgroupUsageSource, V2RatesFromTheSecondTick) {
  MemEnv env;
  SetV2(&env, 1'000'000, 0);
  env.Set("/cg/job/memory.stat", "anon 1048576\nfile 2097152\n");
  env.Set("/cg/job/memory.pressure", "some avg10=0 total=0\n");
  env.Set("/cg/job/io.pressure", "some avg10=0 total=100\n");
  env.Set("/cg/job/cgroup.procs", "42\n43\n");
  CgroupUsageSource source(&env, JobCgroupDirs{.unified = "/cg/job"});
  Sample s;
  std::vector<Notice> notices;
  source.Read(Tick{10, true}, &s, &notices);
  EXPECT_TRUE(notices.empty());
  EXPECT_FALSE(s.job.cpu_cores);
  EXPECT_EQ(s.job.memory_anon_bytes, 1048576);
  EXPECT_EQ(s.job.memory_file_bytes, 2097152);
  EXPECT_EQ(s.job.cgroup_procs_digest, ProcsDigest("43\n42\n"));

  SetV2(&env, 1'000'000 + 750'000, 50'000);  // 0.75 s of CPU and 50 ms stalled in 0.5 s
  env.Set("/cg/job/io.pressure", "some avg10=0 total=100100\n");
  s = Sample{};
  source.Read(Tick{10.5, true}, &s, &notices);
  EXPECT_DOUBLE_EQ(*s.job.cpu_cores, 1.5);
  EXPECT_DOUBLE_EQ(*s.job.cpu_pressure_ratio, 0.1);
  EXPECT_DOUBLE_EQ(*s.job.memory_pressure_ratio, 0);
  EXPECT_DOUBLE_EQ(*s.job.io_pressure_ratio, 0.2);
  s = Sample{};
  source.Read(Tick{10.6, false}, &s, &notices);  // between rows: CPU, not the slow files
  EXPECT_TRUE(s.job.cpu_cores);
  EXPECT_FALSE(s.job.cpu_pressure_ratio);
  EXPECT_FALSE(s.job.memory_anon_bytes);
  EXPECT_TRUE(s.job.cgroup_procs_digest);
}

TEST(CgroupUsageSource, V1CpuacctAndMemoryWithoutPressureIsSaidOnce) {
  MemEnv env;
  env.Set("/v1/cpuacct/job/cpuacct.usage", "2000000000\n");
  env.Set("/v1/cpuacct/job/cgroup.procs", "7\n");
  env.Set("/v1/memory/job/memory.stat", "total_rss 4096\ntotal_cache 0\n");
  CgroupUsageSource source(&env,
                           JobCgroupDirs{.cpuacct = "/v1/cpuacct/job", .memory = "/v1/memory/job"});
  Sample s;
  std::vector<Notice> notices;
  source.Read(Tick{1, true}, &s, &notices);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].source, "job_cgroup");
  EXPECT_EQ(notices[0].message, "no pressure (PSI: *.pressure)");
  env.Set("/v1/cpuacct/job/cpuacct.usage", "2250000000\n");
  notices.clear();
  s = Sample{};
  source.Read(Tick{2, true}, &s, &notices);
  EXPECT_TRUE(notices.empty());
  EXPECT_DOUBLE_EQ(*s.job.cpu_cores, 0.25);
  EXPECT_EQ(s.job.memory_anon_bytes, 4096);
  EXPECT_FALSE(s.job.cpu_pressure_ratio);
  EXPECT_EQ(s.job.cgroup_procs_digest, ProcsDigest("7\n"));
}

TEST(CgroupUsageSource, ItsProcessesAreReadAgainAfterAForkOrOnARow) {
  MemEnv env;
  SetV2(&env, 1, 0);
  env.Set("/cg/job/cgroup.procs", "42\n");
  CgroupUsageSource source(&env, JobCgroupDirs{.unified = "/cg/job"});
  std::vector<Notice> notices;
  auto digest_at = [&](double t, bool row, uint64_t forks) {
    Sample s;
    s.host.last_pid = forks;
    source.Read(Tick{t, row}, &s, &notices);
    return s.job.cgroup_procs_digest;
  };
  EXPECT_EQ(digest_at(0, true, 100), ProcsDigest("42\n"));
  env.Set("/cg/job/cgroup.procs", "42\n43\n");
  EXPECT_EQ(digest_at(0.1, false, 100), ProcsDigest("42\n"));  // no fork on the host: as before
  EXPECT_EQ(digest_at(0.2, false, 101), ProcsDigest("42\n43\n"));
  env.Set("/cg/job/cgroup.procs", "42\n");  // 43 exited
  EXPECT_EQ(digest_at(0.3, false, 101), ProcsDigest("42\n43\n"));
  EXPECT_EQ(digest_at(1.0, true, 101), ProcsDigest("42\n"));  // seen on the row
}

TEST(CgroupUsageSource, ACounterThatFailsOrGoesBackGivesNoRateThatTick) {
  MemEnv env;
  SetV2(&env, 5'000'000, 0);
  CgroupUsageSource source(&env, JobCgroupDirs{.unified = "/cg/job"});
  Sample s;
  std::vector<Notice> notices;
  source.Read(Tick{0, true}, &s, &notices);
  EXPECT_EQ(notices.size(), 1u);  // no memory.stat here
  env.Remove("/cg/job/cpu.stat");
  s = Sample{};
  source.Read(Tick{1, true}, &s, &notices);
  EXPECT_FALSE(s.job.cpu_cores);
  SetV2(&env, 6'000'000, 0);
  s = Sample{};
  source.Read(Tick{2, true}, &s, &notices);
  EXPECT_FALSE(s.job.cpu_cores);  // one reading since the gap
  SetV2(&env, 6'500'000, 0);
  s = Sample{};
  source.Read(Tick{3, true}, &s, &notices);
  EXPECT_DOUBLE_EQ(*s.job.cpu_cores, 0.5);
  SetV2(&env, 1'000, 0);  // another cgroup under the same name: no negative rate
  s = Sample{};
  source.Read(Tick{4, true}, &s, &notices);
  EXPECT_FALSE(s.job.cpu_cores);
}

// A process whose parent is `ppid`, as /proc/PID/stat says.
void Proc(MemEnv* env, int pid, int ppid) {
  env->Set("/proc/" + std::to_string(pid) + "/stat",
           std::to_string(pid) + " (python) S " + std::to_string(ppid) +
               " 1 1 0 -1 0 0 0 0 0 5 0 0 0 20 0 1 0 100 1000 10 1 2 3\n");
}

TEST(ExistingJobCgroup, TakenWhenTheJobIsAloneInIt) {
  MemEnv env;
  env.Set("/proc/self/mountinfo", test_fixtures::Fixture("proc/mountinfo_v2"));
  env.Set("/proc/4100001/cgroup", "0::/jobs/train\n");
  env.Set("/sys/fs/cgroup/jobs/train/cgroup.procs", "4100001\n4100002\n4100003\n");
  Proc(&env, 4100001, 1);
  Proc(&env, 4100002, 4100001);
  Proc(&env, 4100003, 4100002);  // a grandchild
  JobCgroupView view = ExistingJobCgroup(&env, 4100001);
  EXPECT_EQ(view.dirs.unified, "/sys/fs/cgroup/jobs/train");
  EXPECT_EQ(view.why_not, "");

  env.Set("/sys/fs/cgroup/jobs/train/cgroup.procs", "4100001\n4100009\n");
  Proc(&env, 4100009, 1);  // someone else's
  view = ExistingJobCgroup(&env, 4100001);
  EXPECT_TRUE(view.dirs.empty());
  EXPECT_EQ(view.why_not,
            "the job is not alone in its cgroup /sys/fs/cgroup/jobs/train: it holds process "
            "4100009, which is not the job's");
}

}  // namespace
}  // namespace tv::cgroup_usage_test

#include "sources/host_cpu.h"

#include <gtest/gtest.h>

#include "sources/fixture.h"

namespace tv::host_cpu_test {
namespace {

using test_fixtures::Fixture;

TEST(ProcStatCpu, ParsesAggregateAndPerCoreLines) {
  ProcStatCpu p = ParseProcStatCpu(Fixture("proc/stat_4core_t0"));
  ASSERT_TRUE(p.all);
  EXPECT_EQ(p.all->total, 2255u + 34 + 2290 + 22625563 + 6290 + 127 + 456);
  EXPECT_EQ(p.all->idle, 22625563u + 6290);
  ASSERT_EQ(p.cores.size(), 4u);
  EXPECT_EQ(p.cores[3].id, 3);
  EXPECT_EQ(p.cores[1].times.idle, 5656480u + 4142);
}

TEST(ProcStatCpu, GuestTimeIsNotCountedTwice) {
  ProcStatCpu p = ParseProcStatCpu("cpu 10 0 0 10 0 0 0 0 7 3\n");
  ASSERT_TRUE(p.all);
  EXPECT_EQ(p.all->total, 20u);
}

TEST(ProcStatCpu, OlderKernelsWithFourColumnsCountMissingAsZero) {
  ProcStatCpu p = ParseProcStatCpu("cpu 1 2 3 4\ncpu0 1 2 3 4\n");
  ASSERT_TRUE(p.all);
  EXPECT_EQ(p.all->total, 10u);
  EXPECT_EQ(p.all->idle, 4u);
  EXPECT_EQ(p.cores.size(), 1u);
}

TEST(ProcStatCpu, SkipsShortGarbageAndOverflowingLines) {
  ProcStatCpu p = ParseProcStatCpu(
      "cpu 1 2 3\n"                        // too few columns
      "cpu0 1 2 x 4 5\n"                   // not a number
      "cpu1 -1 2 3 4\n"                    // negative
      "cpu2 18446744073709551615 1 0 0\n"  // sum overflows
      "cpu99999999999999999999 1 2 3 4\n"  // id does not fit
      "cpu70000 1 2 3 4\n"                 // id beyond kMaxCpuId
      "cpuX 1 2 3 4\n"                     // no id
      "cpu3 18446744073709551615 0 0 0\n"  // huge but fits
      "\n\x01\x02 garbage\n");
  EXPECT_FALSE(p.all);
  ASSERT_EQ(p.cores.size(), 1u);
  EXPECT_EQ(p.cores[0].id, 3);
  EXPECT_EQ(p.cores[0].times.total, UINT64_MAX);
}

TEST(ProcStatCpu, EmptyTextGivesNothing) {
  ProcStatCpu p = ParseProcStatCpu("");
  EXPECT_FALSE(p.all);
  EXPECT_TRUE(p.cores.empty());
}

TEST(BusyRatio, IsAbsentWhenCountersGoBackwardsOrStandStill) {
  EXPECT_EQ(BusyRatio({100, 50}, {90, 50}), std::nullopt);
  EXPECT_EQ(BusyRatio({100, 50}, {110, 40}), std::nullopt);
  EXPECT_EQ(BusyRatio({100, 50}, {100, 50}), std::nullopt);
  EXPECT_DOUBLE_EQ(*BusyRatio({100, 50}, {200, 75}), 0.75);
}

class HostCpuSourceTest : public ::testing::Test {
 protected:
  // A row tick unless `row` is false: the source reads its file on those.
  Sample Tick(bool row = true) {
    Sample s;
    source_.Read({.row_tick = row}, &s, &notices_);
    return s;
  }
  MemEnv env_;
  HostCpuSource source_{&env_};
  std::vector<Notice> notices_;
};

TEST_F(HostCpuSourceTest, FirstTickCountsCoresButHasNoRatio) {
  env_.Set("/proc/stat", Fixture("proc/stat_4core_t0"));
  Sample s = Tick();
  EXPECT_FALSE(s.host.cpu_util_ratio);
  EXPECT_TRUE(s.host.core_util_ratio.empty());
  EXPECT_EQ(s.host.cpu_limit_cores, 4.0);
}

TEST_F(HostCpuSourceTest, ComputesRatiosFromDeltasBetweenTicks) {
  env_.Set("/proc/stat", Fixture("proc/stat_4core_t0"));
  Tick();
  env_.Set("/proc/stat", Fixture("proc/stat_4core_t1"));
  Sample s = Tick();
  // Aggregate: +400 user, +360 idle, +40 iowait over 800 jiffies.
  EXPECT_DOUBLE_EQ(*s.host.cpu_util_ratio, 0.5);
  ASSERT_EQ(s.host.core_util_ratio.size(), 4u);
  EXPECT_DOUBLE_EQ(s.host.core_util_ratio[0], 1.0);
  EXPECT_DOUBLE_EQ(s.host.core_util_ratio[1], 0.0);  // idle + iowait only
  EXPECT_DOUBLE_EQ(s.host.core_util_ratio[2], 1.0);
  EXPECT_DOUBLE_EQ(s.host.core_util_ratio[3], 0.0);
  EXPECT_TRUE(notices_.empty());
}

TEST_F(HostCpuSourceTest, BetweenRowsOnlyTheCoresAreSaidAndTheRowGetsTheShareSinceTheLast) {
  env_.Set("/proc/stat", Fixture("proc/stat_4core_t0"));
  Tick(false);  // the first tick reads, for a baseline
  env_.Set("/proc/stat", "garbage that would give no ratio");
  Sample between = Tick(false);
  EXPECT_FALSE(between.host.cpu_util_ratio);
  EXPECT_TRUE(between.host.core_util_ratio.empty());
  EXPECT_EQ(between.host.cpu_limit_cores, 4.0);
  env_.Set("/proc/stat", Fixture("proc/stat_4core_t1"));
  Sample row = Tick();
  EXPECT_DOUBLE_EQ(*row.host.cpu_util_ratio, 0.5);
  EXPECT_EQ(row.host.core_util_ratio.size(), 4u);
}

TEST_F(HostCpuSourceTest, StoppingBetweenRowsReadsTheLastRowsShareOnceMore) {
  env_.Set("/proc/stat", Fixture("proc/stat_4core_t0"));
  Tick();
  Sample last = Tick(false);
  env_.Set("/proc/stat", Fixture("proc/stat_4core_t1"));
  ASSERT_TRUE(source_.Flush(&last));
  EXPECT_DOUBLE_EQ(*last.host.cpu_util_ratio, 0.5);
  Tick();  // a row tick read the file
  Sample after_row;
  EXPECT_FALSE(source_.Flush(&after_row));  // the last row has its share
  EXPECT_FALSE(after_row.host.cpu_util_ratio);
}

TEST_F(HostCpuSourceTest, CoreGoingOfflineShrinksPerCoreVector) {
  env_.Set("/proc/stat", "cpu 0 0 0 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\ncpu2 0 0 0 0\n");
  Tick();
  env_.Set("/proc/stat", "cpu 20 0 0 10\ncpu0 10 0 0 0\ncpu2 10 0 0 10\n");
  Sample s = Tick();
  EXPECT_EQ(s.host.cpu_limit_cores, 2.0);
  ASSERT_EQ(s.host.core_util_ratio.size(), 2u);
  EXPECT_DOUBLE_EQ(s.host.core_util_ratio[0], 1.0);
  EXPECT_DOUBLE_EQ(s.host.core_util_ratio[1], 0.5);
}

TEST_F(HostCpuSourceTest, CoreComingBackOnlineLeavesPerCoreUnknownForOneTick) {
  env_.Set("/proc/stat", "cpu 0 0 0 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\n");
  Tick();
  env_.Set("/proc/stat", "cpu 10 0 0 0\ncpu0 10 0 0 0\n");
  Tick();
  env_.Set("/proc/stat", "cpu 30 0 0 0\ncpu0 20 0 0 0\ncpu1 10 0 0 0\n");
  Sample s = Tick();
  EXPECT_DOUBLE_EQ(*s.host.cpu_util_ratio, 1.0);
  EXPECT_TRUE(s.host.core_util_ratio.empty());
  EXPECT_EQ(s.host.cpu_limit_cores, 2.0);
  env_.Set("/proc/stat", "cpu 40 0 0 10\ncpu0 30 0 0 0\ncpu1 10 0 0 10\n");
  s = Tick();
  ASSERT_EQ(s.host.core_util_ratio.size(), 2u);
  EXPECT_DOUBLE_EQ(s.host.core_util_ratio[1], 0.0);
}

TEST_F(HostCpuSourceTest, CountersGoingBackwardsGiveNoRatioNotNegative) {
  env_.Set("/proc/stat", "cpu 100 0 0 100\ncpu0 100 0 0 100\n");
  Tick();
  env_.Set("/proc/stat", "cpu 50 0 0 100\ncpu0 50 0 0 100\n");
  Sample s = Tick();
  EXPECT_FALSE(s.host.cpu_util_ratio);
  EXPECT_TRUE(s.host.core_util_ratio.empty());
  env_.Set("/proc/stat", "cpu 60 0 0 110\ncpu0 60 0 0 110\n");
  s = Tick();
  EXPECT_DOUBLE_EQ(*s.host.cpu_util_ratio, 0.5);  // recovers from the new baseline
}

TEST_F(HostCpuSourceTest, EmptyFileSetsNothing) {
  env_.Set("/proc/stat", "");
  Sample s = Tick();
  s = Tick();
  EXPECT_FALSE(s.host.cpu_util_ratio);
  EXPECT_FALSE(s.host.cpu_limit_cores);
  EXPECT_TRUE(notices_.empty());
}

TEST_F(HostCpuSourceTest, UnreadableFileIsNoticedOnce) {
  Tick();
  Tick();
  ASSERT_EQ(notices_.size(), 1u);
  EXPECT_EQ(notices_[0].source, "host_cpu");
  EXPECT_NE(notices_[0].message.find("/proc/stat"), std::string::npos);
}

}  // namespace
}  // namespace tv::host_cpu_test

#include "sources/load_average.h"

#include <gtest/gtest.h>

namespace tv::load_average_test {
namespace {

TEST(LoadAvg, ParsesFirstThreeFields) {
  std::optional<LoadAverage> l = ParseLoadAvg("0.11 0.13 0.06 1/89 4134\n");
  ASSERT_TRUE(l);
  EXPECT_DOUBLE_EQ(l->load1, 0.11);
  EXPECT_DOUBLE_EQ(l->load5, 0.13);
  EXPECT_DOUBLE_EQ(l->load15, 0.06);
}

TEST(LoadAvg, RejectsMissingNegativeAndGarbageFields) {
  EXPECT_FALSE(ParseLoadAvg(""));
  EXPECT_FALSE(ParseLoadAvg("0.11 0.13\n"));
  EXPECT_FALSE(ParseLoadAvg("0.11 -1 0.06 1/89 4134\n"));
  EXPECT_FALSE(ParseLoadAvg("0.11 abc 0.06\n"));
  EXPECT_FALSE(ParseLoadAvg("nan 0 0\n"));
}

TEST(LoadAvg, TheLastPidIsTheFifthField) {
  EXPECT_EQ(ParseLastPid("0.11 0.13 0.06 1/89 4134\n"), 4134u);
  EXPECT_FALSE(ParseLastPid("0.11 0.13 0.06 1/89\n"));
  EXPECT_FALSE(ParseLastPid("0.11 0.13 0.06 1/89 x\n"));
}

TEST(LoadAverageSource, LoadsOnRowTicksOnlyTheLastPidOnEvery) {
  MemEnv env;
  env.Set("/proc/loadavg", "1.50 2.25 3.00 2/100 999\n");
  LoadAverageSource source(&env);
  std::vector<Notice> notices;
  Sample s;
  source.Read({.mono_s = 0.1, .row_tick = false}, &s, &notices);
  EXPECT_FALSE(s.host.load1);
  EXPECT_EQ(s.host.last_pid, 999u);
  env.Set("/proc/loadavg", "1.50 2.25 3.00 2/100 1003\n");
  source.Read({.mono_s = 0.2, .row_tick = false}, &s, &notices);
  EXPECT_EQ(s.host.last_pid, 1003u);
  source.Read({.mono_s = 1.0, .row_tick = true}, &s, &notices);
  EXPECT_EQ(s.host.load1, 1.5);
  EXPECT_EQ(s.host.load5, 2.25);
  EXPECT_EQ(s.host.load15, 3.0);
}

TEST(LoadAverageSource, GarbageLeavesLoadAbsentWithoutNotice) {
  MemEnv env;
  env.Set("/proc/loadavg", "\x01garbage");
  LoadAverageSource source(&env);
  std::vector<Notice> notices;
  Sample s;
  source.Read({.mono_s = 1.0, .row_tick = true}, &s, &notices);
  EXPECT_FALSE(s.host.load1);
  EXPECT_TRUE(notices.empty());
}

}  // namespace
}  // namespace tv::load_average_test

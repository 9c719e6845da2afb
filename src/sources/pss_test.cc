#include "sources/pss.h"

#include <gtest/gtest.h>

namespace tv::pss_test {
namespace {

TEST(PssScheduler, FirstRoundIsDueAtOnce) {
  PssScheduler s;
  EXPECT_TRUE(s.Due(0, false));
}

TEST(PssScheduler, PeriodicSpacingFollowsCost) {
  PssScheduler s;
  s.RoundDone(10, 0.002);  // 2 ms of CPU at 0.02% -> every 10 s
  EXPECT_DOUBLE_EQ(s.periodic_spacing_s(), 10);
  EXPECT_FALSE(s.Due(19.9, false));
  EXPECT_TRUE(s.Due(20, false));
}

TEST(PssScheduler, SpacingIsClampedToOneAndThirtySeconds) {
  PssScheduler s;
  s.RoundDone(0, 0.00001);
  EXPECT_DOUBLE_EQ(s.periodic_spacing_s(), 1);
  s.RoundDone(0, 0.5);  // a huge tree: 1000 s by budget, but never staler than 30 s
  EXPECT_DOUBLE_EQ(s.periodic_spacing_s(), 30);
  EXPECT_FALSE(s.Due(29.9, false));
  EXPECT_TRUE(s.Due(30, false));
}

TEST(PssScheduler, ALargeTreesCapGrowsWithItsSizeSoItsRoundsCostNoMoreASecond) {
  PssScheduler s;
  s.RoundDone(0, 0.5, false, 32);  // up to 32 processes: never staler than 30 s
  EXPECT_DOUBLE_EQ(s.periodic_spacing_s(), 30);
  s.RoundDone(0, 0.5, false, 256);  // 8 times 32: 240 s
  EXPECT_DOUBLE_EQ(s.periodic_spacing_s(), 240);
  s.RoundDone(0, 0.02, false, 256);  // cheap enough for the budget: 100 s
  EXPECT_DOUBLE_EQ(s.periodic_spacing_s(), 100);
}

TEST(PssScheduler, MembershipChangeTriggersRoundAtOnceWhileBurstLasts) {
  PssScheduler s;
  s.RoundDone(0, 0.01);  // 10 ms of the 50 ms burst
  EXPECT_TRUE(s.Due(0.1, true));
  EXPECT_FALSE(s.Due(0.1, false));
  s.RoundDone(0.1, 0.045);  // burst spent
  EXPECT_LE(s.burst_left_s(0.1), 0);
  EXPECT_FALSE(s.Due(0.2, true));
  EXPECT_TRUE(s.Due(0.6, true));  // then every min_spacing_s at most
}

TEST(PssScheduler, OneSettlingRoundFollowsARoundAfterAChange) {
  PssScheduler s;
  s.RoundDone(0, 0.001);  // first round; periodic spacing 5 s
  s.RoundDone(1, 0.001, /*after_change=*/true);
  EXPECT_FALSE(s.Due(1.9, false));
  EXPECT_TRUE(s.Due(2.0, false));  // settle_after_s = 1
  s.RoundDone(2.0, 0.001);
  EXPECT_FALSE(s.Due(4.0, false));  // only one
  EXPECT_TRUE(s.Due(7.0, false));   // then periodic again
}

TEST(PssScheduler, BurstRefillsAtTheCpuBudget) {
  PssScheduler s;
  s.RoundDone(0, 0.05);
  EXPECT_NEAR(s.burst_left_s(10), 0.002, 1e-9);  // 10 s at 0.02% of a core
  EXPECT_NEAR(s.burst_left_s(1000), 0.05, 1e-9);
  EXPECT_NEAR(s.burst_left_s(1000000), 0.05, 1e-9);  // never above the burst size
}

TEST(PssScheduler, MembershipChangeTriggersRoundAfterHalfSecondOnceBurstIsSpent) {
  PssScheduler s;
  s.RoundDone(0, 0.06);  // more than the burst; periodic spacing 30 s
  EXPECT_FALSE(s.Due(0.4, true));
  EXPECT_TRUE(s.Due(0.5, true));
  EXPECT_FALSE(s.Due(0.5, false));
}

}  // namespace
}  // namespace tv::pss_test

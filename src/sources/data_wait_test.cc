#include "sources/data_wait.h"

#include <gtest/gtest.h>

namespace tv::data_wait_test {
namespace {

constexpr uint32_t kOn = kWaitMeasured | kWaitTimed;
constexpr uint64_t kSecond = 1'000'000'000;

TEST(DataWaitMeter, ShareIsTheWaitOverTheTimeBetweenReadings) {
  DataWaitMeter m;
  EXPECT_FALSE(m.Update({kOn, 0, 0}, 10 * kSecond));  // the first reading is a baseline
  auto r = m.Update({kOn, kSecond / 4, 0}, 11 * kSecond);
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(*r, 0.25);
  r = m.Update({kOn, kSecond / 4, 0}, 12 * kSecond);  // no wait since: 0, not absent
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(*r, 0.0);
}

TEST(DataWaitMeter, AWaitInProgressIsCreditedAcrossTicks) {
  DataWaitMeter m;
  m.Update({kOn, 0, 0}, 10 * kSecond);
  // A wait began at 10.5 s and still runs at 11 s and 12 s: half a tick, then a whole one.
  uint64_t start = 10 * kSecond + kSecond / 2;
  EXPECT_DOUBLE_EQ(*m.Update({kOn, 0, start}, 11 * kSecond), 0.5);
  EXPECT_DOUBLE_EQ(*m.Update({kOn, 0, start}, 12 * kSecond), 1.0);
  // It ended at 12.25 s: 1.75 s in all, of which 1.5 s were credited already.
  EXPECT_DOUBLE_EQ(*m.Update({kOn, kSecond + 3 * kSecond / 4, 0}, 13 * kSecond), 0.25);
}

TEST(DataWaitMeter, NeverAboveOneNorBelowZero) {
  DataWaitMeter m;
  m.Update({kOn, 0, 0}, 10 * kSecond);
  // More wait than time (a wait's start stamped before the previous reading saw
  // it): at most the whole tick.
  EXPECT_DOUBLE_EQ(*m.Update({kOn, 5 * kSecond, 0}, 11 * kSecond), 1.0);
  // A reading that raced a wait's end and missed it reads lower: no negative
  // wait, and the next reading credits only what was not credited yet.
  m.Update({kOn, 5 * kSecond, 11 * kSecond}, 12 * kSecond);  // 1 s in progress: credited
  EXPECT_DOUBLE_EQ(*m.Update({kOn, 5 * kSecond, 0}, 13 * kSecond), 0.0);
  EXPECT_DOUBLE_EQ(*m.Update({kOn, 6 * kSecond + kSecond / 2, 0}, 14 * kSecond), 0.5);
}

TEST(DataWaitMeter, AbsentWhenNotMeasured) {
  DataWaitMeter m;
  for (uint64_t t = 10; t < 14; ++t) EXPECT_FALSE(m.Update({0, 0, 0}, t * kSecond));
  // A wait start without the measured flag (a stale slot) is not trusted either.
  EXPECT_FALSE(m.Update({0, kSecond, 12 * kSecond}, 15 * kSecond));
}

TEST(DataWaitMeter, AbsentOutsideTheTimedLoopUnlessItWaitedSince) {
  DataWaitMeter m;
  m.Update({kOn, 0, 0}, 10 * kSecond);
  // The loop ended (an eval phase, between epochs) after a last wait in this tick:
  EXPECT_DOUBLE_EQ(*m.Update({kWaitMeasured, kSecond / 10, 0}, 11 * kSecond), 0.1);
  // then no timing: neither wait nor work of the loop.
  EXPECT_FALSE(m.Update({kWaitMeasured, kSecond / 10, 0}, 12 * kSecond));
  EXPECT_DOUBLE_EQ(*m.Update({kOn, kSecond / 10, 0}, 13 * kSecond), 0.0);
}

TEST(DataWaitMeter, ReadWaitTakesTheSlotsFields) {
  StepSlot slot{};
  slot.wait_ns.store(7);
  slot.wait_start_ns.store(9);
  slot.wait_flags.store(kOn);
  WaitReading r = ReadWait(slot);
  EXPECT_EQ(r.wait_ns, 7u);
  EXPECT_EQ(r.wait_start_ns, 9u);
  EXPECT_EQ(r.flags, kOn);
}

}  // namespace
}  // namespace tv::data_wait_test

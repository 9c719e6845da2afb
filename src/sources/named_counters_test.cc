#include "sources/named_counters.h"

#include <gtest/gtest.h>

namespace tv::named_counters_test {
namespace {

TEST(NamedCounters, FirstReadHasNoIncrease) {
  NamedCounters c;
  c.BeginRound();
  EXPECT_FALSE(c.Update("eth0", {10, 20}));
  c.BeginRound();
  auto d = c.Update("eth0", {15, 40});
  ASSERT_TRUE(d);
  EXPECT_EQ((*d)[0], 5u);
  EXPECT_EQ((*d)[1], 20u);
}

TEST(NamedCounters, CounterGoingBackwardsIsAResetNotANegativeIncrease) {
  NamedCounters c;
  c.BeginRound();
  c.Update("eth0", {UINT64_MAX, 20});
  c.BeginRound();
  EXPECT_FALSE(c.Update("eth0", {3, 25}));
  c.BeginRound();
  auto d = c.Update("eth0", {10, 30});
  ASSERT_TRUE(d);
  EXPECT_EQ((*d)[0], 7u);
}

TEST(NamedCounters, NameMissingForARoundStartsAfresh) {
  NamedCounters c;
  c.BeginRound();
  c.Update("sdb", {0, 0});
  c.BeginRound();  // sdb unplugged: not read this round
  c.BeginRound();
  EXPECT_FALSE(c.Update("sdb", {100, 100}));
  c.BeginRound();
  EXPECT_TRUE(c.Update("sdb", {100, 100}));
}

}  // namespace
}  // namespace tv::named_counters_test

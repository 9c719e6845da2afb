#include "analysis/hysteresis.h"

#include <gtest/gtest.h>

namespace tv::hysteresis_test {
namespace {

using Edge = Hysteresis::Edge;

TEST(Hysteresis, RisesOnceTheConditionHeldLongEnough) {
  Hysteresis h;
  EXPECT_EQ(h.Feed(0, true, false, 3, 10), Edge::kNone);
  EXPECT_EQ(h.Feed(2, true, false, 3, 10), Edge::kNone);
  EXPECT_EQ(h.Feed(3, true, false, 3, 10), Edge::kRise);
  EXPECT_EQ(h.Feed(4, true, true, 3, 10), Edge::kNone);  // on already
}

TEST(Hysteresis, AGapStartsTheWaitToRiseOver) {
  Hysteresis h;
  h.Feed(0, true, false, 3, 10);
  h.Feed(2, false, false, 3, 10);
  EXPECT_FALSE(h.true_since);
  EXPECT_EQ(h.Feed(3, true, false, 3, 10), Edge::kNone);
  EXPECT_EQ(h.Feed(6, true, false, 3, 10), Edge::kRise);
}

TEST(Hysteresis, FallsOnceClearForTheHoldAndNotWhenTheConditionComesBack) {
  Hysteresis h;
  EXPECT_EQ(h.Feed(10, false, true, 3, 5), Edge::kNone);
  EXPECT_EQ(h.Feed(14, false, true, 3, 5), Edge::kNone);
  EXPECT_EQ(h.Feed(15, true, true, 3, 5), Edge::kNone);  // back within the hold
  EXPECT_FALSE(h.clear_since);
  EXPECT_EQ(h.Feed(16, false, true, 3, 5), Edge::kNone);
  EXPECT_EQ(h.Feed(21, false, true, 3, 5), Edge::kFall);
  EXPECT_FALSE(h.clear_since);
  EXPECT_EQ(h.Feed(30, false, false, 3, 5), Edge::kNone);  // off: nothing to wait for
  EXPECT_FALSE(h.clear_since);
}

TEST(Hysteresis, ZeroDelaysRiseAndFallAtOnce) {
  Hysteresis h;
  EXPECT_EQ(h.Feed(0, true, false, 0, 0), Edge::kRise);
  EXPECT_EQ(h.Feed(1, false, true, 0, 0), Edge::kFall);
}

}  // namespace
}  // namespace tv::hysteresis_test

#include "core/open_phases.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

TEST(OpenPhases, AnEndClosesTheInnermostOfItsNameAndTheCapRefuses) {
  OpenPhases p;
  EXPECT_EQ(p.innermost(), "");
  ASSERT_TRUE(p.Begin("train"));
  ASSERT_TRUE(p.Begin("eval"));
  ASSERT_TRUE(p.Begin("train"));
  p.End("train");  // the inner train
  EXPECT_EQ(p.innermost(), "eval");
  p.End("save");   // none open: ignored
  p.End("train");  // the outer one, under eval
  EXPECT_EQ(p.innermost(), "eval");
  p.End("eval");
  EXPECT_TRUE(p.empty());
  for (size_t i = 0; i < OpenPhases::kMax; ++i) ASSERT_TRUE(p.Begin("step"));
  EXPECT_FALSE(p.Begin("deeper"));
  EXPECT_EQ(p.innermost(), "step");
  p.Clear();
  EXPECT_TRUE(p.empty());
}

}  // namespace
}  // namespace tv

#include "sources/text.h"

#include <gtest/gtest.h>

namespace tv::text {
namespace {

TEST(Text, SplitsLinesWithAndWithoutTrailingNewline) {
  std::string_view rest = "a b\nc\n\nd";
  EXPECT_EQ(NextLine(&rest), "a b");
  EXPECT_EQ(NextLine(&rest), "c");
  EXPECT_EQ(NextLine(&rest), "");
  EXPECT_EQ(NextLine(&rest), "d");
  EXPECT_TRUE(rest.empty());
  EXPECT_EQ(NextLine(&rest), "");
}

TEST(Text, SplitsFieldsOnRunsOfBlanks) {
  std::string_view rest = "  cpu0\t 12  34 \n";
  EXPECT_EQ(NextField(&rest), "cpu0");
  EXPECT_EQ(NextField(&rest), "12");
  EXPECT_EQ(NextField(&rest), "34");
  EXPECT_EQ(NextField(&rest), "");
}

TEST(Text, ParsesFullRangeOfUnsignedAndRejectsOverflow) {
  EXPECT_EQ(ParseU64("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(ParseU64("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseU64("0"), 0u);
}

TEST(Text, RejectsSignsGarbageAndPartialNumbers) {
  EXPECT_EQ(ParseU64(""), std::nullopt);
  EXPECT_EQ(ParseU64("-1"), std::nullopt);
  EXPECT_EQ(ParseU64("+1"), std::nullopt);
  EXPECT_EQ(ParseU64("12ab"), std::nullopt);
  EXPECT_EQ(ParseU64(" 12"), std::nullopt);
  EXPECT_EQ(ParseI64("-1"), -1);
  EXPECT_EQ(ParseDouble("0.25"), 0.25);
  EXPECT_EQ(ParseDouble("nan"), std::nullopt);
  EXPECT_EQ(ParseDouble("inf"), std::nullopt);
  EXPECT_EQ(ParseDouble("1e999"), std::nullopt);
}

TEST(Text, CheckedMulDetectsOverflow) {
  EXPECT_EQ(CheckedMul(1024, 3), 3072u);
  EXPECT_EQ(CheckedMul(UINT64_MAX, 1024), std::nullopt);
}

}  // namespace
}  // namespace tv::text

#include "core/near.h"

#include <gtest/gtest.h>

#include <array>
#include <string_view>

namespace tv {
namespace {

TEST(Near, EditDistanceCountsASwapOfNeighboursAsOneEdit) {
  EXPECT_EQ(EditDistance("interval", "interval"), 0u);
  EXPECT_EQ(EditDistance("intervl", "interval"), 1u);    // one left out
  EXPECT_EQ(EditDistance("intervall", "interval"), 1u);  // one too many
  EXPECT_EQ(EditDistance("reprot", "report"), 1u);       // two swapped
  EXPECT_EQ(EditDistance("gbb", "gb"), 1u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

TEST(Near, SuggestsTheNearestWordOnlyForATypo) {
  constexpr std::array<std::string_view, 4> kFlags = {"--interval", "--sample-hz", "--out",
                                                      "--quiet"};
  EXPECT_EQ(NearestWord("--intervl", kFlags), "--interval");
  EXPECT_EQ(NearestWord("--qiuet", kFlags), "--quiet");
  EXPECT_EQ(NearestWord("--frobnicate", kFlags), "");
  constexpr std::array<std::string_view, 3> kWords = {"out", "gpus", "stats"};
  EXPECT_EQ(NearestWord("ou", kWords), "");  // one edit, but half the word
  EXPECT_EQ(NearestWord("gpu", kWords), "gpus");
  EXPECT_EQ(NearestWord("statz", kWords), "stats");
  EXPECT_EQ(NearestWord("anything", std::span<const std::string_view>()), "");
}

TEST(Near, OnATieTheFirstWordWins) {
  constexpr std::array<std::string_view, 2> kUnits = {"GB", "GiB"};
  EXPECT_EQ(NearestWord("GiBB", kUnits), "GiB");
  EXPECT_EQ(NearestWord("GBi", kUnits), "GB");  // one edit from each
}

}  // namespace
}  // namespace tv

#include "core/near.h"

#include <gtest/gtest.h>

#include <array>
#include <string_view>

namespace tv::near_test {
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

TEST(Near, SuggestsAWordCutShortWhenMostOfItIsTyped) {
  constexpr std::array<std::string_view, 3> kMetrics = {"gpus[].util_ratio_max",
                                                        "gpus[].util_ratio", "cpu.util_ratio"};
  EXPECT_EQ(NearestWord("gpus[].util", kMetrics), "gpus[].util_ratio");  // the shortest it begins
  EXPECT_EQ(NearestWord("gpus[].utl", kMetrics), "");  // the start of none, and too far
  EXPECT_EQ(NearestWord("gpus[", kMetrics), "");       // under half of each
  constexpr std::array<std::string_view, 3> kWords = {"report", "reports_dir", "out"};
  EXPECT_EQ(NearestWord("repo", kWords), "report");  // 2 edits of 4, but its start
  EXPECT_EQ(NearestWord("ou", kWords), "");          // too short to tell apart
  constexpr std::array<std::string_view, 2> kTypoFirst = {"stats_window", "statz"};
  EXPECT_EQ(NearestWord("stats", kTypoFirst), "statz");  // a typo beats a word cut short
}

TEST(Near, OnATieTheFirstWordWins) {
  constexpr std::array<std::string_view, 2> kUnits = {"GB", "GiB"};
  EXPECT_EQ(NearestWord("GiBB", kUnits), "GiB");
  EXPECT_EQ(NearestWord("GBi", kUnits), "GB");  // one edit from each
}

}  // namespace
}  // namespace tv::near_test

#include "views/report/downsample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace tv::downsample_test {
namespace {

TEST(Downsample, ShortSeriesPassThroughUnchanged) {
  std::vector<double> x = {0, 1, 2};
  std::vector<float> y = {5, 6, 7};
  Downsampled d = Downsample(x, {&y}, 10);
  EXPECT_EQ(d.x, x);
  EXPECT_EQ(d.ys[0], y);
}

TEST(Downsample, KeepsEverySpikeAndDipOfADay) {
  size_t n = 86400;
  std::vector<double> x(n);
  std::vector<float> y(n), z(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<double>(i + 1);
    y[i] = 0.5f + 0.1f * std::sin(static_cast<float>(i) / 500.0f);
    z[i] = 10;
  }
  y[12345] = 3.0f;   // a one-second spike
  y[70001] = -2.0f;  // a one-second dip
  z[40000] = 11.0f;  // in another series, same bucket grid
  Downsampled d = Downsample(x, {&y, &z}, 1500);
  ASSERT_EQ(d.x.size(), 3000u);
  ASSERT_EQ(d.ys[0].size(), 3000u);
  EXPECT_EQ(*std::max_element(d.ys[0].begin(), d.ys[0].end()), 3.0f);
  EXPECT_EQ(*std::min_element(d.ys[0].begin(), d.ys[0].end()), -2.0f);
  EXPECT_EQ(*std::max_element(d.ys[1].begin(), d.ys[1].end()), 11.0f);
  // The spike sits in the bucket whose span holds its row's x.
  auto at = std::find(d.ys[0].begin(), d.ys[0].end(), 3.0f) - d.ys[0].begin();
  size_t bucket = static_cast<size_t>(at) / 2;
  EXPECT_LE(d.x[2 * bucket], x[12345]);
  EXPECT_GE(d.x[2 * bucket + 1], x[12345]);
  EXPECT_TRUE(std::is_sorted(d.x.begin(), d.x.end()));
}

TEST(Downsample, KeepsTheOrderInWhichMinAndMaxOccurred) {
  std::vector<double> x = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<float> falling = {9, 8, 7, 6, 5, 4, 3, 2};
  Downsampled d = Downsample(x, {&falling}, 2);
  EXPECT_EQ(d.ys[0], (std::vector<float>{9, 6, 5, 2}));
  EXPECT_EQ(d.x, (std::vector<double>{0, 3, 4, 7}));
}

TEST(Downsample, ABucketWithoutValuesStaysEmpty) {
  std::vector<double> x = {0, 1, 2, 3, 4, 5};
  float none = std::nanf("");
  std::vector<float> y = {1, 2, none, none, 5, 6};
  Downsampled d = Downsample(x, {&y}, 3);
  ASSERT_EQ(d.ys[0].size(), 6u);
  EXPECT_TRUE(std::isnan(d.ys[0][2]));
  EXPECT_TRUE(std::isnan(d.ys[0][3]));
  EXPECT_EQ(d.ys[0][5], 6.0f);
}

}  // namespace
}  // namespace tv::downsample_test

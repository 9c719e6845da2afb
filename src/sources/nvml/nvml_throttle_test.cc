#include "sources/nvml/nvml_throttle.h"

#include <gtest/gtest.h>

namespace tv::nvml_throttle_test {
namespace {

TEST(ClockEventReasons, DecodesIntoGauges) {
  GpuSample g;
  DecodeClockEventReasons(0x1 | 0x4 | 0x40, &g);
  EXPECT_EQ(*g.throttle_power_ratio, 1);
  EXPECT_EQ(*g.throttle_thermal_ratio, 1);
  EXPECT_EQ(*g.throttle_hw_slowdown_ratio, 0);
  EXPECT_EQ(*g.throttle_any_ratio, 1);
  DecodeClockEventReasons(0x1, &g);  // idle is not throttling
  EXPECT_EQ(*g.throttle_any_ratio, 0);
  DecodeClockEventReasons(0x80, &g);
  EXPECT_EQ(*g.throttle_hw_slowdown_ratio, 1);
}

TEST(ClockEventReasons, NamesTheBits) {
  EXPECT_EQ(ClockEventReasonNames(0x4 | 0x20 | (1ULL << 40)),
            (std::vector<std::string_view>{"SwPowerCap", "SwThermalSlowdown", "Unknown"}));
  EXPECT_TRUE(ClockEventReasonNames(0).empty());
}

}  // namespace
}  // namespace tv::nvml_throttle_test

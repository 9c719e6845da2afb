// Clock-event (throttle) reasons: decoding NVML's bit mask into the 0/1 gauges
// of GpuSample, and naming the bits for `check` and summaries.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/gpu_sample.h"

namespace tv {

// Sets the throttle_*_ratio gauges of *out from `reasons` (0 or 1 each):
//   power       SwPowerCap
//   thermal     SwThermalSlowdown | HwThermalSlowdown
//   hw_slowdown HwSlowdown | HwPowerBrakeSlowdown
//   any         every reason but GpuIdle, ApplicationsClocksSetting and
//               DisplayClockSetting (settings, not pressure)
void DecodeClockEventReasons(uint64_t reasons, GpuSample* out);

// Names of the bits set in `reasons` ("SwPowerCap", ...), lowest bit first;
// "Unknown" last when bits beyond those NVML documents are set.
std::vector<std::string_view> ClockEventReasonNames(uint64_t reasons);

}  // namespace tv

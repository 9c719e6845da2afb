#include "sources/nvml/nvml_throttle.h"

#include <array>
#include <utility>

#include "sources/nvml/nvml_abi.h"

namespace tv {
namespace {

constexpr std::array<std::pair<uint64_t, std::string_view>, 9> kNames = {{
    {NVML_CLOCKS_EVENT_REASON_GPU_IDLE, "GpuIdle"},
    {NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS_SETTING, "ApplicationsClocksSetting"},
    {NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP, "SwPowerCap"},
    {NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN, "HwSlowdown"},
    {NVML_CLOCKS_EVENT_REASON_SYNC_BOOST, "SyncBoost"},
    {NVML_CLOCKS_EVENT_REASON_SW_THERMAL_SLOWDOWN, "SwThermalSlowdown"},
    {NVML_CLOCKS_EVENT_REASON_HW_THERMAL_SLOWDOWN, "HwThermalSlowdown"},
    {NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN, "HwPowerBrakeSlowdown"},
    {NVML_CLOCKS_EVENT_REASON_DISPLAY_CLOCK_SETTING, "DisplayClockSetting"},
}};

constexpr uint64_t kNotPressure = NVML_CLOCKS_EVENT_REASON_GPU_IDLE |
                                  NVML_CLOCKS_EVENT_REASON_APPLICATIONS_CLOCKS_SETTING |
                                  NVML_CLOCKS_EVENT_REASON_DISPLAY_CLOCK_SETTING;

double Bit(uint64_t reasons, uint64_t mask) { return (reasons & mask) != 0 ? 1.0 : 0.0; }

}  // namespace

void DecodeClockEventReasons(uint64_t reasons, GpuSample* out) {
  out->clock_event_reasons = reasons;
  out->throttle_power_ratio = Bit(reasons, NVML_CLOCKS_EVENT_REASON_SW_POWER_CAP);
  out->throttle_thermal_ratio = Bit(reasons, NVML_CLOCKS_EVENT_REASON_SW_THERMAL_SLOWDOWN |
                                                 NVML_CLOCKS_EVENT_REASON_HW_THERMAL_SLOWDOWN);
  out->throttle_hw_slowdown_ratio =
      Bit(reasons,
          NVML_CLOCKS_EVENT_REASON_HW_SLOWDOWN | NVML_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN);
  out->throttle_any_ratio = Bit(reasons, ~kNotPressure);
}

std::vector<std::string_view> ClockEventReasonNames(uint64_t reasons) {
  std::vector<std::string_view> names;
  uint64_t known = 0;
  for (const auto& [mask, name] : kNames) {
    known |= mask;
    if ((reasons & mask) != 0) names.push_back(name);
  }
  if ((reasons & ~known) != 0) names.push_back("Unknown");
  return names;
}

}  // namespace tv

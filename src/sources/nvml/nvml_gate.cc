#include "sources/nvml/nvml_gate.h"

namespace tv {

std::string_view NvmlGroupName(NvmlGroup g) {
  switch (g) {
    case NvmlGroup::kUtil:
      return "util";
    case NvmlGroup::kMemory:
      return "memory";
    case NvmlGroup::kTemperature:
      return "temperature";
    case NvmlGroup::kPower:
      return "power";
    case NvmlGroup::kPowerLimit:
      return "power_limit";
    case NvmlGroup::kEnergy:
      return "energy_counter";
    case NvmlGroup::kClocks:
      return "clocks";
    case NvmlGroup::kThrottle:
      return "clock_event_reasons";
    case NvmlGroup::kPcie:
      return "pcie";
    case NvmlGroup::kFan:
      return "fan";
    case NvmlGroup::kPstate:
      return "performance_state";
    case NvmlGroup::kEcc:
      return "ecc";
    case NvmlGroup::kUtilSamples:
      return "util_samples";
    case NvmlGroup::kPowerSamples:
      return "power_samples";
    case NvmlGroup::kProcesses:
      return "processes";
    case NvmlGroup::kProcessUtil:
      return "process_utilization";
    case NvmlGroup::kGpm:
      return "gpm";
    case NvmlGroup::kCount:
      break;
  }
  return "?";
}

std::string_view GateStateName(MetricGate::State s) {
  switch (s) {
    case MetricGate::State::kUntried:
      return "untried";
    case MetricGate::State::kOk:
      return "ok";
    case MetricGate::State::kUnsupported:
      return "not supported";
    case MetricGate::State::kNoPermission:
      return "no permission";
    case MetricGate::State::kMissing:
      return "missing from the driver library";
    case MetricGate::State::kError:
      return "error";
  }
  return "?";
}

bool MetricGate::Record(NvmlGroup g, nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      Set(g, State::kOk);
      return true;
    case NVML_ERROR_NOT_SUPPORTED:
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      Set(g, State::kUnsupported);
      return false;
    case NVML_ERROR_NO_PERMISSION:
      if (state(g) != State::kNoPermission) permission_refused |= 1u << static_cast<unsigned>(g);
      Set(g, State::kNoPermission);
      return false;
    case NVML_ERROR_GPU_IS_LOST:
      lost_ = true;
      return false;
    default:
      if (state(g) != State::kOk) Set(g, State::kError);
      return false;
  }
}

}  // namespace tv

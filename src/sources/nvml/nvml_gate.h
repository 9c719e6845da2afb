// MetricGate: remembers, per unit and per metric group, whether NVML calls
// work, so that a metric the device lacks is tried once and then switched off
// (NOT_SUPPORTED, FUNCTION_NOT_FOUND, a missing symbol, NO_PERMISSION) rather
// than retried at every tick. Transient errors leave the metric on but absent.
// Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "sources/nvml/nvml_abi.h"

namespace tv {

enum class NvmlGroup : uint8_t {
  kUtil,
  kMemory,
  kTemperature,
  kPower,
  kPowerLimit,
  kEnergy,
  kClocks,
  kThrottle,
  kPcie,
  kFan,
  kPstate,
  kEcc,
  kUtilSamples,
  kPowerSamples,
  kProcesses,
  kProcessUtil,
  kGpm,
  kCount
};

std::string_view NvmlGroupName(NvmlGroup g);  // "util", "memory", ...

class MetricGate {
 public:
  enum class State : uint8_t { kUntried, kOk, kUnsupported, kNoPermission, kMissing, kError };

  // Whether calls for `g` are still worth making.
  bool open(NvmlGroup g) const {
    State s = state(g);
    return s == State::kUntried || s == State::kOk || s == State::kError;
  }
  State state(NvmlGroup g) const { return states_[static_cast<size_t>(g)]; }
  // The group's function is missing from the library: off for good.
  void Missing(NvmlGroup g) { Set(g, State::kMissing); }
  void Unsupported(NvmlGroup g) { Set(g, State::kUnsupported); }
  // Records one call's result; true on SUCCESS. GPU_IS_LOST marks the unit lost.
  bool Record(NvmlGroup g, nvmlReturn_t r);
  // A group whose first call worked gave no values after all (GPM: the
  // samples were taken but the metrics could not be computed): "error", still tried.
  void Failed(NvmlGroup g) {
    if (open(g)) Set(g, State::kError);
  }

  bool lost() const { return lost_; }
  void set_lost() { lost_ = true; }
  // Groups newly refused for permission, for one notice each; cleared by the caller.
  uint32_t permission_refused = 0;  // bit per NvmlGroup

 private:
  void Set(NvmlGroup g, State s) { states_[static_cast<size_t>(g)] = s; }
  std::array<State, static_cast<size_t>(NvmlGroup::kCount)> states_{};
  bool lost_ = false;
};

std::string_view GateStateName(MetricGate::State s);  // "ok", "not supported", ...

}  // namespace tv

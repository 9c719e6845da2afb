// NvmlLib: libnvidia-ml loaded at run time with dlopen, its functions resolved
// into pointers typed from our declarations (nvml_abi.h). Versioned symbols are
// preferred with fallbacks (nvmlInit_v2 -> nvmlInit, ...); optional symbols may
// be missing (nullptr) on older drivers. nvmlShutdown and dlclose run on
// destruction.
//
// Thread safety: NVML itself is thread-safe; NvmlLib is immutable after Open.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "sources/nvml/nvml_abi.h"

namespace tv {

class NvmlLib {
 public:
  // The library trainvitals loads: `path` if not empty, else the environment's
  // TRAINVITALS_NVML_LIBRARY, else libnvidia-ml.so.1.
  static std::string LibraryPath(const std::string& path);

  // Loads the library and initialises NVML. On failure returns nullptr and a
  // Status whose message is one sentence fit for a user (NotFound: no library;
  // Unavailable: no driver or version mismatch; PermissionDenied). `detail`,
  // when given, receives the loader's own words (dlerror) for `check`.
  static std::unique_ptr<NvmlLib> Open(const std::string& path, Status* status,
                                       std::string* detail = nullptr);
  ~NvmlLib();
  NvmlLib(const NvmlLib&) = delete;
  NvmlLib& operator=(const NvmlLib&) = delete;

  const std::string& path() const { return path_; }
  // Optional symbols this library lacks (for `check`).
  const std::vector<std::string>& missing() const { return missing_; }
  // nvmlErrorString, or the number when the library lacks it.
  std::string Error(nvmlReturn_t r) const;

// NOLINTNEXTLINE(bugprone-macro-parentheses): fn is a name, not an expression
#define TV_NVML_FN(fn) decltype(&::fn) fn = nullptr;
  // Resolved from the newest version present; named for the newest.
  TV_NVML_FN(nvmlInit_v2)
  TV_NVML_FN(nvmlShutdown)
  TV_NVML_FN(nvmlErrorString)
  TV_NVML_FN(nvmlSystemGetDriverVersion)
  TV_NVML_FN(nvmlSystemGetNVMLVersion)
  TV_NVML_FN(nvmlSystemGetCudaDriverVersion)
  TV_NVML_FN(nvmlDeviceGetCount_v2)
  TV_NVML_FN(nvmlDeviceGetHandleByIndex_v2)
  TV_NVML_FN(nvmlDeviceGetName)
  TV_NVML_FN(nvmlDeviceGetUUID)
  TV_NVML_FN(nvmlDeviceGetSerial)
  TV_NVML_FN(nvmlDeviceGetCudaComputeCapability)
  TV_NVML_FN(nvmlDeviceGetUtilizationRates)
  TV_NVML_FN(nvmlDeviceGetMemoryInfo_v2)
  TV_NVML_FN(nvmlDeviceGetMemoryInfo)
  TV_NVML_FN(nvmlDeviceGetTemperature)
  TV_NVML_FN(nvmlDeviceGetPowerUsage)
  TV_NVML_FN(nvmlDeviceGetEnforcedPowerLimit)
  TV_NVML_FN(nvmlDeviceGetTotalEnergyConsumption)
  TV_NVML_FN(nvmlDeviceGetClockInfo)
  // Resolved from ...ClocksEventReasons, else the older ...ClocksThrottleReasons.
  TV_NVML_FN(nvmlDeviceGetCurrentClocksEventReasons)
  TV_NVML_FN(nvmlDeviceGetPcieThroughput)
  TV_NVML_FN(nvmlDeviceGetFanSpeed)
  TV_NVML_FN(nvmlDeviceGetPerformanceState)
  TV_NVML_FN(nvmlDeviceGetTotalEccErrors)
  TV_NVML_FN(nvmlDeviceGetSamples)
  TV_NVML_FN(nvmlDeviceGetComputeRunningProcesses_v3)
  TV_NVML_FN(nvmlDeviceGetComputeRunningProcesses_v2)
  TV_NVML_FN(nvmlDeviceGetComputeRunningProcesses)
  TV_NVML_FN(nvmlDeviceGetProcessUtilization)
  TV_NVML_FN(nvmlDeviceGetMigMode)
  TV_NVML_FN(nvmlDeviceGetMaxMigDeviceCount)
  TV_NVML_FN(nvmlDeviceGetMigDeviceHandleByIndex)
  TV_NVML_FN(nvmlDeviceGetGpuInstanceId)
  TV_NVML_FN(nvmlGpmQueryDeviceSupport)
  TV_NVML_FN(nvmlGpmSampleAlloc)
  TV_NVML_FN(nvmlGpmSampleFree)
  TV_NVML_FN(nvmlGpmSampleGet)
  TV_NVML_FN(nvmlGpmMigSampleGet)
  TV_NVML_FN(nvmlGpmMetricsGet)
#undef TV_NVML_FN

 private:
  NvmlLib() = default;
  void* handle_ = nullptr;
  bool initialised_ = false;
  std::string path_;
  std::vector<std::string> missing_;
};

// NVML's name for an error code ("NOT_SUPPORTED"), independent of the library.
const char* NvmlCodeName(nvmlReturn_t r);

}  // namespace tv

#include "sources/nvml/nvml_lib.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>

namespace tv {
namespace {

constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";

// Resolves the first of `names` present into *fn; records the newest as
// missing when none is.
template <typename Fn>
bool Resolve(void* handle, Fn* fn, std::initializer_list<const char*> names,
             std::vector<std::string>* missing) {
  for (const char* name : names) {
    if (void* sym = ::dlsym(handle, name)) {
      *fn = reinterpret_cast<Fn>(sym);
      return true;
    }
  }
  missing->emplace_back(*names.begin());
  return false;
}

}  // namespace

const char* NvmlCodeName(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "SUCCESS";
    case NVML_ERROR_UNINITIALIZED:
      return "UNINITIALIZED";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED:
      return "NOT_SUPPORTED";
    case NVML_ERROR_NO_PERMISSION:
      return "NO_PERMISSION";
    case NVML_ERROR_NOT_FOUND:
      return "NOT_FOUND";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "INSUFFICIENT_SIZE";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "DRIVER_NOT_LOADED";
    case NVML_ERROR_TIMEOUT:
      return "TIMEOUT";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "LIBRARY_NOT_FOUND";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "FUNCTION_NOT_FOUND";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED:
      return "RESET_REQUIRED";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
      return "LIB_RM_VERSION_MISMATCH";
    case NVML_ERROR_NO_DATA:
      return "NO_DATA";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "ARGUMENT_VERSION_MISMATCH";
    default:
      return "UNKNOWN";
  }
}

std::string NvmlLib::LibraryPath(const std::string& path) {
  if (!path.empty()) return path;
  const char* env = std::getenv("TRAINVITALS_NVML_LIBRARY");
  if (env != nullptr && *env != '\0') return env;
  return kDefaultLibrary;
}

std::unique_ptr<NvmlLib> NvmlLib::Open(const std::string& requested, Status* status,
                                       std::string* detail) {
  std::unique_ptr<NvmlLib> lib(new NvmlLib());
  lib->path_ = LibraryPath(requested);
  lib->handle_ = ::dlopen(lib->path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle_ == nullptr) {
    const char* why = ::dlerror();
    if (detail != nullptr && why != nullptr) *detail = why;
    *status = Status::NotFound(
        fmt::format("no NVIDIA driver library ({} not found): GPU metrics off, host metrics go on",
                    lib->path_));
    return nullptr;
  }
  void* h = lib->handle_;
  std::vector<std::string> required_missing;
  Resolve(h, &lib->nvmlInit_v2, {"nvmlInit_v2", "nvmlInit"}, &required_missing);
  Resolve(h, &lib->nvmlShutdown, {"nvmlShutdown"}, &required_missing);
  Resolve(h, &lib->nvmlDeviceGetCount_v2, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"},
          &required_missing);
  Resolve(h, &lib->nvmlDeviceGetHandleByIndex_v2,
          {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}, &required_missing);
  if (!required_missing.empty()) {
    *status = Status::Unavailable(fmt::format(
        "{} lacks {}: not an NVIDIA driver library? GPU metrics off, host metrics go on",
        lib->path_, required_missing.front()));
    return nullptr;
  }
  auto* m = &lib->missing_;
#define TV_OPT(fn, ...) Resolve(h, &lib->fn, {#fn, ##__VA_ARGS__}, m)
  TV_OPT(nvmlErrorString);
  TV_OPT(nvmlSystemGetDriverVersion);
  TV_OPT(nvmlSystemGetNVMLVersion);
  TV_OPT(nvmlSystemGetCudaDriverVersion, "nvmlSystemGetCudaDriverVersion_v2");
  TV_OPT(nvmlDeviceGetName);
  TV_OPT(nvmlDeviceGetUUID);
  TV_OPT(nvmlDeviceGetSerial);
  TV_OPT(nvmlDeviceGetCudaComputeCapability);
  TV_OPT(nvmlDeviceGetUtilizationRates);
  TV_OPT(nvmlDeviceGetMemoryInfo_v2);
  TV_OPT(nvmlDeviceGetMemoryInfo);
  TV_OPT(nvmlDeviceGetTemperature);
  TV_OPT(nvmlDeviceGetPowerUsage);
  TV_OPT(nvmlDeviceGetEnforcedPowerLimit);
  TV_OPT(nvmlDeviceGetTotalEnergyConsumption);
  TV_OPT(nvmlDeviceGetClockInfo);
  TV_OPT(nvmlDeviceGetCurrentClocksEventReasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  TV_OPT(nvmlDeviceGetPcieThroughput);
  TV_OPT(nvmlDeviceGetFanSpeed);
  TV_OPT(nvmlDeviceGetPerformanceState);
  TV_OPT(nvmlDeviceGetTotalEccErrors);
  TV_OPT(nvmlDeviceGetSamples);
  TV_OPT(nvmlDeviceGetComputeRunningProcesses_v3);
  TV_OPT(nvmlDeviceGetComputeRunningProcesses_v2);
  TV_OPT(nvmlDeviceGetComputeRunningProcesses);
  TV_OPT(nvmlDeviceGetProcessUtilization);
  TV_OPT(nvmlDeviceGetMigMode);
  TV_OPT(nvmlDeviceGetMaxMigDeviceCount);
  TV_OPT(nvmlDeviceGetMigDeviceHandleByIndex);
  TV_OPT(nvmlDeviceGetGpuInstanceId);
  TV_OPT(nvmlGpmQueryDeviceSupport);
  TV_OPT(nvmlGpmSampleAlloc);
  TV_OPT(nvmlGpmSampleFree);
  TV_OPT(nvmlGpmSampleGet);
  TV_OPT(nvmlGpmMigSampleGet);
  TV_OPT(nvmlGpmMetricsGet);
#undef TV_OPT

  nvmlReturn_t r = lib->nvmlInit_v2();
  if (r != NVML_SUCCESS) {
    std::string what = fmt::format("nvmlInit: {}", lib->Error(r));
    switch (r) {
      case NVML_ERROR_NO_PERMISSION:
        *status = Status::PermissionDenied(fmt::format(
            "no permission to open the NVIDIA device files /dev/nvidia* ({}): add the user to "
            "the group owning them (often 'video'); GPU metrics off, host metrics go on",
            what));
        break;
      case NVML_ERROR_LIB_RM_VERSION_MISMATCH:
        *status = Status::Unavailable(fmt::format(
            "NVIDIA driver and library versions differ ({}): reboot or reload the nvidia "
            "module; GPU metrics off, host metrics go on",
            what));
        break;
      default:
        *status = Status::Unavailable(fmt::format(
            "NVIDIA driver not usable ({}): GPU metrics off, host metrics go on", what));
    }
    return nullptr;
  }
  lib->initialised_ = true;
  *status = Status::Ok();
  return lib;
}

NvmlLib::~NvmlLib() {
  if (initialised_) nvmlShutdown();
  if (handle_ != nullptr) ::dlclose(handle_);
}

std::string NvmlLib::Error(nvmlReturn_t r) const {
  const char* text = nvmlErrorString ? nvmlErrorString(r) : nullptr;
  if (text != nullptr) return fmt::format("{} ({})", text, NvmlCodeName(r));
  return NvmlCodeName(r);
}

}  // namespace tv

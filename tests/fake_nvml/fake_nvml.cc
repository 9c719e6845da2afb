// A fake libnvidia-ml.so.1 for tests: the NVML functions trainvitals uses,
// answering from a scenario file (README.md). Built in variants: with
// FAKE_NVML_OLD_DRIVER, the symbols a pre-Volta-era driver lacks are not
// exported at all, so their absence is seen through dlsym as on a real system.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "fake_state.h"

using fake_nvml::Device;

namespace fake_nvml {
namespace {

World g_world;
int g_init_count = 0;
double g_init_mono = 0;
double g_init_wall = 0;
double g_frozen = -1;
std::map<std::string, long, std::less<>> g_calls;

double Mono() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace

World& TheWorld() { return g_world; }
double Now() { return g_frozen >= 0 ? g_frozen : Mono() - g_init_mono; }
unsigned long long StampUs(double t) {
  return static_cast<unsigned long long>((g_init_wall + t) * 1e6);
}
long& Counter(const char* fn) { return g_calls[fn]; }

double Value(const Device* d, const char* key, double fallback) {
  auto it = d->series.find(key);
  return it == d->series.end() ? fallback : it->second.At(Now());
}

int Fail(const Device* d, const char* fn) {
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  double now = Now();
  for (const Device* x = d; x != nullptr; x = x->parent) {
    if (x->lost_from_s >= 0 && now >= x->lost_from_s) return NVML_ERROR_GPU_IS_LOST;
  }
  auto hang = d->hangs.find(fn);
  if (hang != d->hangs.end() && now >= hang->second) {
    for (;;) sleep(3600);  // a driver call that never returns
  }
  auto it = d->errors.find(fn);
  if (it != d->errors.end() && now >= it->second.from_s) return it->second.code;
  return NVML_SUCCESS;
}

}  // namespace fake_nvml

using namespace fake_nvml;  // NOLINT: this file is the fake's implementation

namespace {

bool Has(const Device* d, const char* key) { return d->series.count(key) != 0; }

int CopyString(const std::string& s, char* out, unsigned length) {
  if (out == nullptr || length <= s.size()) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}

}  // namespace

extern "C" {

// Test hooks (not NVML): freeze the fake's clock at `t` seconds since
// nvmlInit (negative: follow the real clock), and count calls of one function.
__attribute__((visibility("default"))) void fakeNvmlSetTime(double t) { g_frozen = t; }
// How many nvmlInit calls are not yet matched by nvmlShutdown.
__attribute__((visibility("default"))) int fakeNvmlInitCount() { return g_init_count; }
__attribute__((visibility("default"))) long fakeNvmlCallCount(const char* fn) {
  auto it = g_calls.find(fn);
  return it == g_calls.end() ? 0 : it->second;
}

nvmlReturn_t nvmlInit_v2(void) {
  ++Counter("nvmlInit_v2");
  if (g_init_count == 0) {
    if (int e = fake_nvml::LoadWorld(&g_world)) return e;
    if (g_world.init_error != 0) return g_world.init_error;
    if (g_world.init_delay_s > 0) {  // a driver slow to initialise (about 80 ms on an H200)
      timespec delay;
      delay.tv_sec = static_cast<time_t>(g_world.init_delay_s);
      delay.tv_nsec = static_cast<long>((g_world.init_delay_s - delay.tv_sec) * 1e9);
      while (nanosleep(&delay, &delay) != 0) {
      }
    }
    g_init_mono = Mono();
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    g_init_wall = ts.tv_sec + ts.tv_nsec * 1e-9;
    for (auto& entry : g_calls) entry.second = 0;  // DEVICE_CALL keeps references
  }
  ++g_init_count;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlInit(void) { return nvmlInit_v2(); }
// nvidia-ml-py starts with it (flags 0), so Python peers load the fake too.
nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
  (void)flags;
  return nvmlInit_v2();
}
nvmlReturn_t nvmlShutdown(void) {
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  --g_init_count;
  return NVML_SUCCESS;
}
const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}
nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length) {
  return CopyString(g_world.driver_version, version, length);
}
nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned length) {
  return CopyString(g_world.nvml_version, version, length);
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* v) {
  *v = g_world.cuda_version;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  *count = static_cast<unsigned>(g_world.devices.size());
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCount(unsigned* count) { return nvmlDeviceGetCount_v2(count); }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  ++Counter("nvmlDeviceGetHandleByIndex_v2");
  if (g_init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (index >= g_world.devices.size()) return NVML_ERROR_INVALID_ARGUMENT;
  Device* d = g_world.devices[index].get();
  if (auto it = d->errors.find("nvmlDeviceGetHandleByIndex"); it != d->errors.end()) {
    return it->second.code;
  }
  *device = reinterpret_cast<nvmlDevice_t>(d);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned index, nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  DEVICE_CALL(nvmlDeviceGetName);
  return CopyString(d->name, name, length);
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length) {
  DEVICE_CALL(nvmlDeviceGetUUID);
  return CopyString(d->uuid, uuid, length);
}
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned length) {
  DEVICE_CALL(nvmlDeviceGetSerial);
  return CopyString(d->serial, serial, length);
}
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
  DEVICE_CALL(nvmlDeviceGetCudaComputeCapability);
  *major = d->cc_major;
  *minor = d->cc_minor;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* u) {
  DEVICE_CALL(nvmlDeviceGetUtilizationRates);
  WHOLE_GPU_ONLY();
  u->gpu = static_cast<unsigned>(Value(d, "util_gpu", 50));
  u->memory = static_cast<unsigned>(Value(d, "util_memory", 20));
  return NVML_SUCCESS;
}
#ifndef FAKE_NVML_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* m) {
  DEVICE_CALL(nvmlDeviceGetMemoryInfo_v2);
  if (m->version != NVML_MEMORY_V2_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  m->total = static_cast<unsigned long long>(Value(d, "memory_total_bytes", 85899345920.0));
  m->reserved = static_cast<unsigned long long>(Value(d, "memory_reserved_bytes", 536870912.0));
  m->used = static_cast<unsigned long long>(Value(d, "memory_used_bytes", 1073741824.0));
  m->free = m->total - m->reserved - m->used;
  return NVML_SUCCESS;
}
#endif
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* m) {
  DEVICE_CALL(nvmlDeviceGetMemoryInfo);
  m->total = static_cast<unsigned long long>(Value(d, "memory_total_bytes", 85899345920.0));
  m->used = static_cast<unsigned long long>(Value(d, "memory_used_bytes", 1073741824.0));
  m->free = m->total - m->used;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned* t) {
  DEVICE_CALL(nvmlDeviceGetTemperature);
  WHOLE_GPU_ONLY();
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  *t = static_cast<unsigned>(Value(d, "temperature_c", 40));
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned* mw) {
  DEVICE_CALL(nvmlDeviceGetPowerUsage);
  WHOLE_GPU_ONLY();
  *mw = static_cast<unsigned>(Value(d, "power_mw", 100000));
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned* mw) {
  DEVICE_CALL(nvmlDeviceGetEnforcedPowerLimit);
  WHOLE_GPU_ONLY();
  *mw = static_cast<unsigned>(Value(d, "power_limit_mw", 700000));
  return NVML_SUCCESS;
}
#ifndef FAKE_NVML_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* mj) {
  DEVICE_CALL(nvmlDeviceGetTotalEnergyConsumption);
  WHOLE_GPU_ONLY();
  // The driver counts since it loaded, long before monitoring began.
  double since_load = 5e9;
  auto it = d->series.find("power_mw");
  double power = it == d->series.end() ? 100000 * Now() : it->second.Integral(Now());
  *mj = static_cast<unsigned long long>(since_load + power);
  return NVML_SUCCESS;
}
#endif
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned* mhz) {
  DEVICE_CALL(nvmlDeviceGetClockInfo);
  WHOLE_GPU_ONLY();
  if (type == NVML_CLOCK_SM || type == NVML_CLOCK_GRAPHICS) {
    *mhz = static_cast<unsigned>(Value(d, "sm_clock_mhz", 1980));
  } else if (type == NVML_CLOCK_MEM) {
    *mhz = static_cast<unsigned>(Value(d, "memory_clock_mhz", 2619));
  } else {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return NVML_SUCCESS;
}
static nvmlReturn_t Reasons(nvmlDevice_t device, unsigned long long* r) {
  DEVICE_CALL(nvmlDeviceGetCurrentClocksEventReasons);
  WHOLE_GPU_ONLY();
  *r = static_cast<unsigned long long>(Value(d, "clock_event_reasons", 0));
  return NVML_SUCCESS;
}
#ifndef FAKE_NVML_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long* r) {
  return Reasons(device, r);
}
#endif
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long* r) {
  return Reasons(device, r);
}
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, int counter, unsigned* kbs) {
  DEVICE_CALL(nvmlDeviceGetPcieThroughput);
  WHOLE_GPU_ONLY();
  *kbs = static_cast<unsigned>(
      Value(d, counter == NVML_PCIE_UTIL_TX_BYTES ? "pcie_tx_kbps" : "pcie_rx_kbps", 1000));
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t device, unsigned* percent) {
  DEVICE_CALL(nvmlDeviceGetFanSpeed);
  if (d->is_mig || !Has(d, "fan_percent")) return NVML_ERROR_NOT_SUPPORTED;  // passive cooling
  *percent = static_cast<unsigned>(Value(d, "fan_percent", 0));
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, int* p) {
  DEVICE_CALL(nvmlDeviceGetPerformanceState);
  WHOLE_GPU_ONLY();
  *p = static_cast<int>(Value(d, "pstate", 0));
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int type, int counter,
                                         unsigned long long* count) {
  DEVICE_CALL(nvmlDeviceGetTotalEccErrors);
  WHOLE_GPU_ONLY();
  if (counter != NVML_VOLATILE_ECC && counter != NVML_AGGREGATE_ECC) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  *count = static_cast<unsigned long long>(
      Value(d, type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? "ecc_corrected" : "ecc_uncorrected", 0));
  return NVML_SUCCESS;
}

}  // extern "C"

// nvml_calls: the cost of each NVML query trainvitals makes, with a cached
// handle, on the real driver. Standalone (g++ and libdl only) so it builds on
// a GPU machine without the project's dependencies:
//   g++ -std=c++20 -O2 -I src bench/nvml_calls/nvml_calls.cc -ldl -o nvml_calls
//   ./nvml_calls [library [rounds]] > calls.json
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "sources/nvml/nvml_abi.h"

namespace {

double NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

void* g_lib = nullptr;
template <typename Fn>
Fn Sym(const char* name) {
  return reinterpret_cast<Fn>(dlsym(g_lib, name));
}
#define SYM(fn) auto fn##_p = Sym<decltype(&::fn)>(#fn)

// Each call timed back to back (the driver may answer from a cache then),
// and again once a round, rounds 100 ms apart as a monitor's ticks are.
struct Timed {
  std::string name;
  std::function<int()> call;
  int rc = 0;
  double us_per_call = 0;
  std::vector<double> spaced_us;
};
std::vector<Timed> g_timed;

void Time(const char* name, std::function<int()> call, int reps = 200) {
  Timed t{name, std::move(call)};
  t.rc = t.call();
  double t0 = NowNs();
  for (int i = 0; i < reps; ++i) t.call();
  t.us_per_call = (NowNs() - t0) / reps / 1000.0;
  g_timed.push_back(std::move(t));
}

void TimeSpaced(int rounds) {
  for (int r = 0; r < rounds; ++r) {
    timespec gap{0, 100 * 1000 * 1000};
    nanosleep(&gap, nullptr);
    for (Timed& t : g_timed) {
      double t0 = NowNs();
      t.call();
      t.spaced_us.push_back((NowNs() - t0) / 1000.0);
    }
  }
  for (size_t i = 0; i < g_timed.size(); ++i) {
    Timed& t = g_timed[i];
    std::sort(t.spaced_us.begin(), t.spaced_us.end());
    double median = t.spaced_us.empty() ? 0 : t.spaced_us[t.spaced_us.size() / 2];
    std::printf(
        "%s\n    {\"call\": \"%s\", \"rc\": %d, \"us_per_call\": %.3f, "
        "\"us_spaced_median\": %.3f}",
        i == 0 ? "" : ",", t.name.c_str(), t.rc, t.us_per_call, median);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "libnvidia-ml.so.1";
  g_lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (g_lib == nullptr) {
    std::printf("{\"error\": \"dlopen %s failed\"}\n", path);
    return 1;
  }
  SYM(nvmlInit_v2);
  SYM(nvmlDeviceGetHandleByIndex_v2);
  if (!nvmlInit_v2_p || nvmlInit_v2_p() != NVML_SUCCESS) {
    std::printf("{\"error\": \"nvmlInit_v2 failed\"}\n");
    return 1;
  }
  double t0 = NowNs();
  nvmlDevice_t dev = nullptr;
  nvmlDeviceGetHandleByIndex_v2_p(0, &dev);
  double handle_us = (NowNs() - t0) / 1000.0;
  std::printf("{\"library\": \"%s\", \"first_handle_us\": %.1f, \"calls\": [", path, handle_us);

  SYM(nvmlDeviceGetUtilizationRates);
  SYM(nvmlDeviceGetMemoryInfo_v2);
  SYM(nvmlDeviceGetTemperature);
  SYM(nvmlDeviceGetPowerUsage);
  SYM(nvmlDeviceGetTotalEnergyConsumption);
  SYM(nvmlDeviceGetClockInfo);
  SYM(nvmlDeviceGetCurrentClocksEventReasons);
  SYM(nvmlDeviceGetPcieThroughput);
  SYM(nvmlDeviceGetFanSpeed);
  SYM(nvmlDeviceGetPerformanceState);
  SYM(nvmlDeviceGetTotalEccErrors);
  SYM(nvmlDeviceGetSamples);
  SYM(nvmlDeviceGetComputeRunningProcesses_v3);
  SYM(nvmlDeviceGetProcessUtilization);
  SYM(nvmlGpmQueryDeviceSupport);
  SYM(nvmlGpmSampleAlloc);
  SYM(nvmlGpmSampleGet);

  nvmlUtilization_t u;
  nvmlMemory_v2_t m;
  unsigned v;
  int iv;
  unsigned long long ull;
  if (nvmlDeviceGetUtilizationRates_p)
    Time("nvmlDeviceGetUtilizationRates", [&] { return nvmlDeviceGetUtilizationRates_p(dev, &u); });
  if (nvmlDeviceGetMemoryInfo_v2_p)
    Time("nvmlDeviceGetMemoryInfo_v2", [&] {
      m.version = NVML_MEMORY_V2_VERSION;
      return nvmlDeviceGetMemoryInfo_v2_p(dev, &m);
    });
  if (nvmlDeviceGetTemperature_p)
    Time("nvmlDeviceGetTemperature", [&] { return nvmlDeviceGetTemperature_p(dev, 0, &v); });
  if (nvmlDeviceGetPowerUsage_p)
    Time("nvmlDeviceGetPowerUsage", [&] { return nvmlDeviceGetPowerUsage_p(dev, &v); });
  if (nvmlDeviceGetTotalEnergyConsumption_p)
    Time("nvmlDeviceGetTotalEnergyConsumption",
         [&] { return nvmlDeviceGetTotalEnergyConsumption_p(dev, &ull); });
  if (nvmlDeviceGetClockInfo_p)
    Time("nvmlDeviceGetClockInfo(SM)", [&] { return nvmlDeviceGetClockInfo_p(dev, 1, &v); });
  if (nvmlDeviceGetCurrentClocksEventReasons_p)
    Time("nvmlDeviceGetCurrentClocksEventReasons",
         [&] { return nvmlDeviceGetCurrentClocksEventReasons_p(dev, &ull); });
  if (nvmlDeviceGetPcieThroughput_p)
    Time(
        "nvmlDeviceGetPcieThroughput(TX)",
        [&] { return nvmlDeviceGetPcieThroughput_p(dev, 0, &v); }, 20);  // 20 ms window each
  if (nvmlDeviceGetFanSpeed_p)
    Time("nvmlDeviceGetFanSpeed", [&] { return nvmlDeviceGetFanSpeed_p(dev, &v); });
  if (nvmlDeviceGetPerformanceState_p)
    Time("nvmlDeviceGetPerformanceState",
         [&] { return nvmlDeviceGetPerformanceState_p(dev, &iv); });
  if (nvmlDeviceGetTotalEccErrors_p)
    Time("nvmlDeviceGetTotalEccErrors",
         [&] { return nvmlDeviceGetTotalEccErrors_p(dev, 0, 0, &ull); });
  std::vector<nvmlSample_t> samples(256);
  if (nvmlDeviceGetSamples_p) {
    Time("nvmlDeviceGetSamples(GPU_UTIL)", [&] {
      nvmlValueType_t t;
      unsigned n = samples.size();
      return nvmlDeviceGetSamples_p(dev, 1, 0, &t, &n, samples.data());
    });
    Time("nvmlDeviceGetSamples(TOTAL_POWER)", [&] {
      nvmlValueType_t t;
      unsigned n = samples.size();
      return nvmlDeviceGetSamples_p(dev, 0, 0, &t, &n, samples.data());
    });
  }
  std::vector<nvmlProcessInfo_v2_t> procs(64);
  if (nvmlDeviceGetComputeRunningProcesses_v3_p)
    Time("nvmlDeviceGetComputeRunningProcesses_v3", [&] {
      unsigned n = procs.size();
      return nvmlDeviceGetComputeRunningProcesses_v3_p(dev, &n, procs.data());
    });
  std::vector<nvmlProcessUtilizationSample_t> pu(256);
  if (nvmlDeviceGetProcessUtilization_p)
    Time("nvmlDeviceGetProcessUtilization", [&] {
      unsigned n = pu.size();
      return nvmlDeviceGetProcessUtilization_p(dev, pu.data(), &n, 0);
    });
  nvmlGpmSample_t gs = nullptr;  // outlives the calls timed again in rounds
  if (nvmlGpmQueryDeviceSupport_p && nvmlGpmSampleAlloc_p && nvmlGpmSampleGet_p) {
    nvmlGpmSupport_t s{NVML_GPM_SUPPORT_VERSION, 0};
    nvmlGpmQueryDeviceSupport_p(dev, &s);
    if (s.isSupportedDevice && nvmlGpmSampleAlloc_p(&gs) == NVML_SUCCESS) {
      Time(
          "nvmlGpmSampleGet", [&] { return nvmlGpmSampleGet_p(dev, gs); }, 20);
    }
  }
  TimeSpaced(argc > 2 ? std::atoi(argv[2]) : 30);
  std::printf("\n]}\n");
  return 0;
}

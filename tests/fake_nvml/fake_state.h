// State shared by the fake's exported functions (fake_nvml.cc, fake_nvml_more.cc).
#pragma once

#include "scenario.h"
#include "sources/nvml/nvml_abi.h"

namespace fake_nvml {

World& TheWorld();
double Now();                               // seconds since nvmlInit, or the frozen time
unsigned long long StampUs(double t);       // driver timestamp of time t, microseconds
long& Counter(const char* fn);              // calls of `fn`, for tests
int Fail(const Device* d, const char* fn);  // the NVML code the scenario makes `fn` return
double Value(const Device* d, const char* key, double fallback);

}  // namespace fake_nvml

#define DEVICE_CALL(fn)                                                    \
  static long& calls_ = ::fake_nvml::Counter(#fn);                         \
  ++calls_;                                                                \
  ::fake_nvml::Device* d = reinterpret_cast<::fake_nvml::Device*>(device); \
  if (d == nullptr) return NVML_ERROR_INVALID_ARGUMENT;                    \
  if (int e = ::fake_nvml::Fail(d, #fn)) return e;

#define WHOLE_GPU_ONLY() \
  if (d->is_mig) return NVML_ERROR_NOT_SUPPORTED;

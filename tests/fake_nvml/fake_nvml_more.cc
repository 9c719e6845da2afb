// The fake's driver sample buffers, processes, MIG and GPM (see fake_nvml.cc).
#include <algorithm>
#include <cstring>
#include <vector>

#include "fake_state.h"

using namespace fake_nvml;  // NOLINT: this file is the fake's implementation

namespace {

constexpr unsigned kBufferSamples = 100;  // the driver keeps a short history

// Times k * period (k >= 1) up to now, newest kBufferSamples, after `last_us`.
std::vector<double> BufferTimes(double period, unsigned long long last_us) {
  std::vector<double> times;
  if (period <= 0) return times;
  double now = Now();
  long newest = static_cast<long>(now / period);
  for (long k = std::max(1L, newest - static_cast<long>(kBufferSamples) + 1); k <= newest; ++k) {
    double t = k * period;
    if (StampUs(t) > last_us) times.push_back(t);
  }
  return times;
}

template <typename Info>
nvmlReturn_t Processes(Device* d, unsigned* count, Info* infos) {
  Info found[64];
  unsigned n = 0;
  for (const auto& p : d->processes) {
    int pid = p.pid_now();
    if (pid <= 0 || n == 64) continue;
    Info& info = found[n++];
    std::memset(&info, 0, sizeof(info));
    info.pid = static_cast<unsigned>(pid);
    info.usedGpuMemory = static_cast<unsigned long long>(p.memory_bytes.At(Now()));
    if constexpr (sizeof(Info) == sizeof(nvmlProcessInfo_v2_t)) {
      info.gpuInstanceId = d->is_mig ? d->gpu_instance : 0xFFFFFFFFu;
      info.computeInstanceId = d->is_mig ? 0 : 0xFFFFFFFFu;
    }
  }
  if (*count < n || (n > 0 && infos == nullptr)) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  *count = n;
  std::copy(found, found + n, infos);
  return NVML_SUCCESS;
}

}  // namespace

struct nvmlGpmSample_st {
  Device* device = nullptr;
  double t = -1;
};

extern "C" {

nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type,
                                  unsigned long long last, nvmlValueType_t* vtype, unsigned* count,
                                  nvmlSample_t* samples) {
  DEVICE_CALL(nvmlDeviceGetSamples);
  WHOLE_GPU_ONLY();
  const char* key = nullptr;
  double period = 0;
  if (type == NVML_GPU_UTILIZATION_SAMPLES) {
    ++Counter("nvmlDeviceGetSamples(GPU_UTILIZATION)");
    key = "util_gpu";
    period = d->util_period_s;
  } else if (type == NVML_TOTAL_POWER_SAMPLES) {
    ++Counter("nvmlDeviceGetSamples(TOTAL_POWER)");
    key = "power_mw";
    period = d->power_period_s;
  } else {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  if (period <= 0) return NVML_ERROR_NOT_SUPPORTED;
  *vtype = NVML_VALUE_TYPE_UNSIGNED_INT;
  if (samples == nullptr) {
    *count = kBufferSamples;
    return NVML_SUCCESS;
  }
  std::vector<double> times = BufferTimes(period, last);
  if (times.empty()) return NVML_ERROR_NOT_FOUND;
  if (*count < times.size()) times.erase(times.begin(), times.end() - *count);
  auto it = d->series.find(key);
  for (size_t i = 0; i < times.size(); ++i) {
    samples[i].timeStamp = StampUs(times[i]);
    double v = it == d->series.end() ? (type == NVML_TOTAL_POWER_SAMPLES ? 100000 : 50)
                                     : it->second.At(times[i]);
    samples[i].sampleValue.uiVal = static_cast<unsigned>(v);
  }
  *count = static_cast<unsigned>(times.size());
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD_DRIVER
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned* count,
                                                     nvmlProcessInfo_v2_t* infos) {
  DEVICE_CALL(nvmlDeviceGetComputeRunningProcesses_v3);
  return Processes(d, count, infos);
}
#endif
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned* count,
                                                     nvmlProcessInfo_v2_t* infos) {
  DEVICE_CALL(nvmlDeviceGetComputeRunningProcesses_v2);
  return Processes(d, count, infos);
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned* count,
                                                  nvmlProcessInfo_v1_t* infos) {
  DEVICE_CALL(nvmlDeviceGetComputeRunningProcesses);
  return Processes(d, count, infos);
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t* util, unsigned* count,
                                             unsigned long long last) {
  DEVICE_CALL(nvmlDeviceGetProcessUtilization);
  std::vector<nvmlProcessUtilizationSample_t> out;
  for (double t : BufferTimes(d->proc_period_s, last)) {
    for (const auto& p : d->processes) {
      int pid = p.pid_now();
      if (pid <= 0 || !p.sm_util.present) continue;
      nvmlProcessUtilizationSample_t s{};
      s.pid = static_cast<unsigned>(pid);
      s.timeStamp = StampUs(t);
      s.smUtil = static_cast<unsigned>(p.sm_util.At(t));
      out.push_back(s);
    }
  }
  if (out.empty()) return NVML_ERROR_NOT_FOUND;
  if (util == nullptr || *count < out.size()) {
    *count = static_cast<unsigned>(out.size());
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  std::copy(out.begin(), out.end(), util);
  *count = static_cast<unsigned>(out.size());
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned* current, unsigned* pending) {
  DEVICE_CALL(nvmlDeviceGetMigMode);
  if (d->is_mig) return NVML_ERROR_NOT_SUPPORTED;
  *current = *pending = d->mig_slots.empty() ? 0 : 1;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned* count) {
  DEVICE_CALL(nvmlDeviceGetMaxMigDeviceCount);
  *count = d->mig_max;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned index,
                                                 nvmlDevice_t* mig) {
  DEVICE_CALL(nvmlDeviceGetMigDeviceHandleByIndex);
  if (index >= d->mig_slots.size()) return NVML_ERROR_INVALID_ARGUMENT;
  if (d->mig_slots[index] == nullptr) return NVML_ERROR_NOT_FOUND;
  *mig = reinterpret_cast<nvmlDevice_t>(d->mig_slots[index]);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned* id) {
  DEVICE_CALL(nvmlDeviceGetGpuInstanceId);
  if (!d->is_mig) return NVML_ERROR_NOT_SUPPORTED;
  *id = d->gpu_instance;
  return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD_DRIVER
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t* support) {
  DEVICE_CALL(nvmlGpmQueryDeviceSupport);
  if (support->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  support->isSupportedDevice = d->gpm.empty() ? 0 : 1;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  *sample = new nvmlGpmSample_st();
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  delete sample;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t sample) {
  DEVICE_CALL(nvmlGpmSampleGet);
  if (d->gpm.empty()) return NVML_ERROR_NOT_SUPPORTED;
  sample->device = d;
  sample->t = Now();
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmMigSampleGet(nvmlDevice_t device, unsigned gi, nvmlGpmSample_t sample) {
  DEVICE_CALL(nvmlGpmMigSampleGet);
  for (Device* slice : d->mig_slots) {
    if (slice == nullptr || slice->gpu_instance != gi) continue;
    if (slice->gpm.empty()) return NVML_ERROR_NOT_SUPPORTED;
    sample->device = slice;
    sample->t = Now();
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_FOUND;
}
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* req) {
  ++Counter("nvmlGpmMetricsGet");
  if (req->version != NVML_GPM_METRICS_GET_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  if (req->numMetrics == 0 || req->numMetrics > NVML_GPM_METRIC_MAX) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const nvmlGpmSample_st* s1 = req->sample1;
  const nvmlGpmSample_st* s2 = req->sample2;
  if (s1 == nullptr || s2 == nullptr || s1->device == nullptr || s1->device != s2->device ||
      s2->t - s1->t < 0.1) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  // Sampling works but the metrics do not come out of the samples.
  if (int e = Fail(s1->device, "nvmlGpmMetricsGet")) return e;
  for (unsigned i = 0; i < req->numMetrics; ++i) {
    nvmlGpmMetric_t& m = req->metrics[i];
    auto it = s1->device->gpm.find(m.metricId);
    if (it == s1->device->gpm.end()) {
      m.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      continue;
    }
    m.nvmlReturn = NVML_SUCCESS;
    m.value = (it->second.Integral(s2->t) - it->second.Integral(s1->t)) / (s2->t - s1->t);
  }
  return NVML_SUCCESS;
}
#endif

}  // extern "C"

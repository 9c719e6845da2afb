// NvmlBackend: compute processes and their SM utilisation.
#include <algorithm>
#include <map>

#include "sources/nvml/nvml_backend.h"

namespace tv {
namespace {

// A first call with count 0 answers the size (SUCCESS: no process); processes
// may start before the second call, so room for a few more is made.
constexpr unsigned kSlack = 8;

}  // namespace

bool NvmlBackend::ReadProcesses(size_t u, std::vector<GpuProcessUse>* out) {
  out->clear();
  NvmlUnitState& st = state_[u];
  MetricGate& gate = st.gate;
  const NvmlLib& l = *lib_;
  if (!gate.open(NvmlGroup::kProcesses) || gate.lost()) return false;
  // _v3 and _v2 share a signature and the 24-byte struct; the unversioned call
  // writes 16-byte entries. Fall back when a version answers FUNCTION_NOT_FOUND.
  while (st.proc_version > 0) {
    auto fn23 = st.proc_version == 3 ? l.nvmlDeviceGetComputeRunningProcesses_v3
                                     : l.nvmlDeviceGetComputeRunningProcesses_v2;
    nvmlReturn_t r = NVML_ERROR_FUNCTION_NOT_FOUND;
    unsigned count = 0;
    for (int attempt = 0; attempt < 3; ++attempt) {
      if (st.proc_version >= 2) {
        if (fn23 == nullptr) break;
        r = fn23(st.handle, &count, count == 0 ? nullptr : st.procs.data());
      } else {
        if (l.nvmlDeviceGetComputeRunningProcesses == nullptr) break;
        r = l.nvmlDeviceGetComputeRunningProcesses(st.handle, &count,
                                                   count == 0 ? nullptr : st.procs_v1.data());
      }
      if (r != NVML_ERROR_INSUFFICIENT_SIZE) break;
      count += kSlack;
      if (st.proc_version >= 2) {
        if (st.procs.size() < count) st.procs.resize(count);
      } else if (st.procs_v1.size() < count) {
        st.procs_v1.resize(count);
      }
    }
    if (r == NVML_ERROR_FUNCTION_NOT_FOUND) {
      --st.proc_version;
      continue;
    }
    if (!gate.Record(NvmlGroup::kProcesses, r)) return false;
    for (unsigned i = 0; i < count; ++i) {
      unsigned pid = st.proc_version >= 2 ? st.procs[i].pid : st.procs_v1[i].pid;
      unsigned long long used =
          st.proc_version >= 2 ? st.procs[i].usedGpuMemory : st.procs_v1[i].usedGpuMemory;
      GpuProcessUse& p = out->emplace_back();
      p.pid = static_cast<int>(pid);
      if (used != NVML_VALUE_NOT_AVAILABLE_ULL) p.memory_bytes = static_cast<double>(used);
    }
    return true;
  }
  gate.Missing(NvmlGroup::kProcesses);
  return false;
}

bool NvmlBackend::ReadProcessUtilization(size_t u, std::vector<GpuProcessUtil>* out) {
  bool ok = ReadProcessUtilizationNow(u, out);
  NvmlUnitState& st = state_[u];
  st.next_proc_util_s = st.last_tick_s + (ok ? kProcessUtilEvery_s : kProcessUtilRetry_s);
  return ok;
}

bool NvmlBackend::ReadProcessUtilizationNow(size_t u, std::vector<GpuProcessUtil>* out) {
  out->clear();
  NvmlUnitState& st = state_[u];
  MetricGate& gate = st.gate;
  auto fn = lib_->nvmlDeviceGetProcessUtilization;
  if (!gate.open(NvmlGroup::kProcessUtil) || gate.lost()) return false;
  if (fn == nullptr) {
    gate.Missing(NvmlGroup::kProcessUtil);
    return false;
  }
  unsigned count = 0;
  nvmlReturn_t r = fn(st.handle, nullptr, &count, st.last_proc_ts);
  if (r == NVML_ERROR_NOT_FOUND) {  // no process ran since the last seen sample
    st.proc_primed = true;
    return gate.Record(NvmlGroup::kProcessUtil, NVML_SUCCESS);
  }
  if (r != NVML_ERROR_INSUFFICIENT_SIZE && !gate.Record(NvmlGroup::kProcessUtil, r)) return false;
  if (count == 0) return st.proc_primed;
  count += kSlack;
  if (st.proc_samples.size() < count) st.proc_samples.resize(count);
  r = fn(st.handle, st.proc_samples.data(), &count, st.last_proc_ts);
  if (r == NVML_ERROR_NOT_FOUND) return gate.Record(NvmlGroup::kProcessUtil, NVML_SUCCESS);
  if (!gate.Record(NvmlGroup::kProcessUtil, r)) return false;

  // Mean SM share of each process over its fresh samples; stale ones (at or
  // before the last seen stamp) and impossible ones (> 100 %) are dropped.
  std::map<int, std::pair<double, int>> per_pid;
  unsigned long long newest = st.last_proc_ts;
  for (unsigned i = 0; i < count && i < st.proc_samples.size(); ++i) {
    const nvmlProcessUtilizationSample_t& s = st.proc_samples[i];
    if (s.timeStamp <= st.last_proc_ts || s.smUtil > 100) continue;
    newest = std::max(newest, s.timeStamp);
    auto& [sum, n] = per_pid[static_cast<int>(s.pid)];
    sum += s.smUtil / 100.0;
    ++n;
  }
  st.last_proc_ts = newest;
  if (!st.proc_primed) {  // history from before monitoring began
    st.proc_primed = true;
    return false;
  }
  for (const auto& [pid, acc] : per_pid) {
    out->push_back(GpuProcessUtil{pid, acc.first / acc.second});
  }
  return true;
}

}  // namespace tv

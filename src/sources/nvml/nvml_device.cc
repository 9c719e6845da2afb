// NvmlBackend: device metrics of one unit.
#include <algorithm>

#include "sources/nvml/nvml_backend.h"
#include "sources/nvml/nvml_throttle.h"

namespace tv {
namespace {

double ValueOf(const nvmlValue_t& v, nvmlValueType_t type) {
  switch (type) {
    case NVML_VALUE_TYPE_DOUBLE:
      return v.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return v.uiVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return static_cast<double>(v.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return static_cast<double>(v.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return static_cast<double>(v.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT:
      return v.siVal;
    case NVML_VALUE_TYPE_UNSIGNED_SHORT:
      return v.usVal;
    default:
      return v.uiVal;
  }
}

// Calls `fn` for group `g` if the library has it and the gate is open.
template <typename Fn, typename... Args>
bool Call(MetricGate& gate, NvmlGroup g, Fn fn, Args... args) {
  if (!gate.open(g) || gate.lost()) return false;
  if (fn == nullptr) {
    gate.Missing(g);
    return false;
  }
  return gate.Record(g, fn(args...));
}

}  // namespace

void NvmlBackend::ReadDevice(size_t u, const Tick& tick, GpuSample* out) {
  NvmlUnitState& st = state_[u];
  MetricGate& gate = st.gate;
  const NvmlLib& l = *lib_;
  nvmlDevice_t h = st.handle;

  if (st.last_tick_s >= 0) st.tick_gap_s = tick.mono_s - st.last_tick_s;
  st.last_tick_s = tick.mono_s;
  if (!tick.row_tick) st.plain_ticks = true;
  Schedule(&st, tick);

  nvmlUtilization_t util{};
  if (Call(gate, NvmlGroup::kUtil, l.nvmlDeviceGetUtilizationRates, h, &util)) {
    out->util_ratio = util.gpu / 100.0;
    out->memory_util_ratio = util.memory / 100.0;
  }
  // The driver's sample buffers cost about 2 ms a call on an H200 (driver
  // 580), so they are read once per row: everything since the previous row;
  // the utilisation buffer only when polls are too sparse to see every value.
  std::optional<double> mean, peak;
  if (tick.row_tick && st.tick_gap_s > kUtilBufferWhenTicksOver_s) {
    ReadBuffered(&st, NVML_GPU_UTILIZATION_SAMPLES, 0.01, &mean, &peak);
  }
  if (mean) {
    out->util_ratio = mean;
    out->util_ratio_peak = peak;
  }

  if (l.nvmlDeviceGetMemoryInfo_v2 != nullptr) {
    nvmlMemory_v2_t mem{};
    mem.version = NVML_MEMORY_V2_VERSION;
    if (Call(gate, NvmlGroup::kMemory, l.nvmlDeviceGetMemoryInfo_v2, h, &mem)) {
      out->memory_used_bytes = static_cast<double>(mem.used);
      out->memory_total_bytes = static_cast<double>(mem.total);
      out->memory_reserved_bytes = static_cast<double>(mem.reserved);
    }
  } else {
    nvmlMemory_t mem{};
    if (Call(gate, NvmlGroup::kMemory, l.nvmlDeviceGetMemoryInfo, h, &mem)) {
      out->memory_used_bytes = static_cast<double>(mem.used);
      out->memory_total_bytes = static_cast<double>(mem.total);
    }
  }

  unsigned value = 0;
  if (Call(gate, NvmlGroup::kTemperature, l.nvmlDeviceGetTemperature, h,
           static_cast<int>(NVML_TEMPERATURE_GPU), &value)) {
    out->temperature_celsius = value;
  }
  if (Call(gate, NvmlGroup::kPower, l.nvmlDeviceGetPowerUsage, h, &value)) {
    out->power_watts = value / 1000.0;
  }
  mean.reset();
  peak.reset();
  if (tick.row_tick) ReadBuffered(&st, NVML_TOTAL_POWER_SAMPLES, 0.001, &mean, &peak);
  if (mean) {
    out->power_watts = mean;
    out->power_watts_peak = peak;
  }
  ReadEnergy(&st, tick, out);

  if (Call(gate, NvmlGroup::kClocks, l.nvmlDeviceGetClockInfo, h, static_cast<int>(NVML_CLOCK_SM),
           &value)) {
    out->sm_clock_hertz = value * 1e6;
  }
  if (Call(gate, NvmlGroup::kClocks, l.nvmlDeviceGetClockInfo, h, static_cast<int>(NVML_CLOCK_MEM),
           &value)) {
    out->memory_clock_hertz = value * 1e6;
  }
  unsigned long long reasons = 0;
  if (Call(gate, NvmlGroup::kThrottle, l.nvmlDeviceGetCurrentClocksEventReasons, h, &reasons)) {
    DecodeClockEventReasons(reasons, out);
  }
  if (tick.row_tick) ReadSlow(&st, out);
  // The first GPM sample at the first tick: the first row's values need a pair.
  if (tick.row_tick || !st.gpm.have_prev) ReadGpm(u, tick, out);
}

void NvmlBackend::ReadSlow(NvmlUnitState* st, GpuSample* out) {
  MetricGate& gate = st->gate;
  const NvmlLib& l = *lib_;
  nvmlDevice_t h = st->handle;
  unsigned value = 0;
  // nvmlDeviceGetPcieThroughput blocks for its 20 ms counting window (measured
  // 20.8 ms on an H200): once per row, and not at all where GPM measures PCIe
  // over the whole row for 0.04 ms.
  if (!st->gpm.supported && Call(gate, NvmlGroup::kPcie, l.nvmlDeviceGetPcieThroughput, h,
                                 static_cast<int>(NVML_PCIE_UTIL_TX_BYTES), &value)) {
    out->pcie_tx_bytes_per_second = value * 1024.0;  // KB/s
    if (Call(gate, NvmlGroup::kPcie, l.nvmlDeviceGetPcieThroughput, h,
             static_cast<int>(NVML_PCIE_UTIL_RX_BYTES), &value)) {
      out->pcie_rx_bytes_per_second = value * 1024.0;
    }
  }
  if (Call(gate, NvmlGroup::kPowerLimit, l.nvmlDeviceGetEnforcedPowerLimit, h, &value)) {
    out->power_limit_watts = value / 1000.0;
  }
  if (Call(gate, NvmlGroup::kFan, l.nvmlDeviceGetFanSpeed, h, &value)) {
    out->fan_ratio = value / 100.0;
  }
  int pstate = 0;
  if (Call(gate, NvmlGroup::kPstate, l.nvmlDeviceGetPerformanceState, h, &pstate) &&
      pstate != NVML_PSTATE_UNKNOWN) {
    out->performance_state = pstate;
  }
  unsigned long long count = 0;
  if (Call(gate, NvmlGroup::kEcc, l.nvmlDeviceGetTotalEccErrors, h,
           static_cast<int>(NVML_MEMORY_ERROR_TYPE_CORRECTED), static_cast<int>(NVML_VOLATILE_ECC),
           &count)) {
    out->ecc_corrected_errors = static_cast<double>(count);
    if (Call(gate, NvmlGroup::kEcc, l.nvmlDeviceGetTotalEccErrors, h,
             static_cast<int>(NVML_MEMORY_ERROR_TYPE_UNCORRECTED),
             static_cast<int>(NVML_VOLATILE_ECC), &count)) {
      out->ecc_uncorrected_errors = static_cast<double>(count);
    }
  }
}

void NvmlBackend::ReadEnergy(NvmlUnitState* st, const Tick& tick, GpuSample* out) {
  NvmlEnergy& e = st->energy;
  unsigned long long mj = 0;
  // The first tick reads the counter, whatever tick it is: energy counts from
  // when monitoring began, not from the first row. Later reads take their turn.
  bool counter_due = st->energy_turn;
  if (counter_due) {
    e.next_counter_s = tick.mono_s + kEnergyCounterRetry_s;  // unless it answers
  }
  if (counter_due && Call(st->gate, NvmlGroup::kEnergy, lib_->nvmlDeviceGetTotalEnergyConsumption,
                          st->handle, &mj)) {
    double j = static_cast<double>(mj) / 1000.0;
    if (!e.first_counter_j) e.first_counter_j = j;
    e.counter_j = j - *e.first_counter_j;
    e.since_counter_j = 0;
    e.last_mono_s = tick.mono_s;
    e.next_counter_s = tick.mono_s + kEnergyCounterEvery_s;
    out->energy_joules = e.counter_j;
    return;
  }
  bool has_counter = st->gate.open(NvmlGroup::kEnergy);
  if (has_counter && !e.first_counter_j) return;  // nothing to add power to yet
  if (out->power_watts && e.last_mono_s >= 0 && tick.mono_s > e.last_mono_s) {
    e.since_counter_j += *out->power_watts * (tick.mono_s - e.last_mono_s);
  }
  if (out->power_watts) e.last_mono_s = tick.mono_s;
  if (e.last_mono_s >= 0) out->energy_joules = e.counter_j + e.since_counter_j;
}

void NvmlBackend::Schedule(NvmlUnitState* st, const Tick& tick) {
  const NvmlEnergy& e = st->energy;
  if (st->next_proc_util_s < 0) st->next_proc_util_s = tick.mono_s + kProcessUtilRetry_s;
  bool energy = st->gate.open(NvmlGroup::kEnergy) && tick.mono_s >= e.next_counter_s;
  bool proc = st->gate.open(NvmlGroup::kProcessUtil) && tick.mono_s >= st->next_proc_util_s;
  // The counter's first read starts the energy count: at the first tick, whatever tick.
  st->energy_turn = energy && !e.first_counter_j;
  st->proc_util_turn = false;
  if (st->energy_turn || (tick.row_tick && st->plain_ticks)) return;
  st->energy_turn = energy && (!proc || e.next_counter_s <= st->next_proc_util_s);
  st->proc_util_turn = proc && !st->energy_turn;
}

void NvmlBackend::ReadBuffered(NvmlUnitState* st, nvmlSamplingType_t type, double scale,
                               std::optional<double>* mean, std::optional<double>* peak) {
  bool is_util = type == NVML_GPU_UTILIZATION_SAMPLES;
  NvmlGroup g = is_util ? NvmlGroup::kUtilSamples : NvmlGroup::kPowerSamples;
  unsigned long long& last = is_util ? st->last_util_ts : st->last_power_ts;
  bool& primed = is_util ? st->util_primed : st->power_primed;
  MetricGate& gate = st->gate;
  auto fn = lib_->nvmlDeviceGetSamples;
  if (!gate.open(g) || gate.lost()) return;
  if (fn == nullptr) return gate.Missing(g);

  nvmlValueType_t vtype = 0;
  unsigned count = 0;
  nvmlReturn_t r;
  if (st->samples.empty()) {  // the buffer's capacity, asked once (72 and 120 on an H200)
    r = fn(st->handle, type, last, &vtype, &count, nullptr);
    if (r == NVML_ERROR_NOT_FOUND) {  // an empty buffer at start
      primed = true;
      gate.Record(g, NVML_SUCCESS);
      return;
    }
    if (!gate.Record(g, r) || count == 0) return;
    st->samples.resize(std::max(count, 128u));
  }
  count = static_cast<unsigned>(st->samples.size());
  r = fn(st->handle, type, last, &vtype, &count, st->samples.data());
  if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
    st->samples.clear();  // size again next time
    return;
  }
  if (r == NVML_ERROR_NOT_FOUND) {  // nothing new
    primed = true;
    gate.Record(g, NVML_SUCCESS);
    return;
  }
  if (!gate.Record(g, r)) return;
  double sum = 0, top = 0;
  unsigned used = 0;
  unsigned long long newest = last;
  for (unsigned i = 0; i < count && i < st->samples.size(); ++i) {
    const nvmlSample_t& s = st->samples[i];
    if (s.timeStamp <= last) continue;
    newest = std::max(newest, s.timeStamp);
    double v = ValueOf(s.sampleValue, vtype) * scale;
    sum += v;
    top = used == 0 ? v : std::max(top, v);
    ++used;
  }
  last = newest;
  // The first read only finds where the buffer stands: history from before
  // monitoring began is not this run's.
  if (!primed) {
    primed = true;
    return;
  }
  if (used == 0) return;
  *mean = sum / used;
  *peak = top;
}

std::optional<double> NvmlBackend::RecentUtilization(size_t u, double window_s) {
  auto fn = lib_->nvmlDeviceGetSamples;
  if (fn == nullptr || u >= state_.size() || state_[u].gate.lost()) return std::nullopt;
  nvmlValueType_t vtype = 0;
  std::vector<nvmlSample_t> samples(128);
  auto count = static_cast<unsigned>(samples.size());
  nvmlReturn_t r =
      fn(state_[u].handle, NVML_GPU_UTILIZATION_SAMPLES, 0, &vtype, &count, samples.data());
  if (r != NVML_SUCCESS || count == 0) return std::nullopt;
  samples.resize(std::min<size_t>(count, samples.size()));
  unsigned long long newest = 0;
  for (const nvmlSample_t& s : samples) newest = std::max(newest, s.timeStamp);
  auto from =
      static_cast<unsigned long long>(std::max(0.0, static_cast<double>(newest) - window_s * 1e6));
  double sum = 0;
  int used = 0;
  for (const nvmlSample_t& s : samples) {
    if (s.timeStamp < from) continue;
    sum += ValueOf(s.sampleValue, vtype) * 0.01;
    ++used;
  }
  if (used == 0) return std::nullopt;
  return sum / used;
}

}  // namespace tv

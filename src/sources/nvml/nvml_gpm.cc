// NvmlBackend: GPU performance monitoring (GPM, Hopper and later). Two GPM
// samples more than 100 ms apart give the metrics over the time between them;
// we take one per row, so each row's GPM values cover that row, and one at the
// first tick, so the first row has them too. GPM counts as readable (`check`)
// only when the metrics come out of the samples, not when sampling alone works.
#include <array>
#include <cstring>

#include "sources/nvml/nvml_backend.h"

namespace tv {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kMinGapS = 0.1;

struct GpmMetric {
  unsigned id;
  double scale;
  std::optional<double> GpuSample::*field;
};

const std::array<GpmMetric, 8> kGpmMetrics = {{
    {NVML_GPM_METRIC_SM_UTIL, 0.01, &GpuSample::sm_active_ratio},
    {NVML_GPM_METRIC_SM_OCCUPANCY, 0.01, &GpuSample::sm_occupancy_ratio},
    {NVML_GPM_METRIC_ANY_TENSOR_UTIL, 0.01, &GpuSample::tensor_active_ratio},
    {NVML_GPM_METRIC_DRAM_BW_UTIL, 0.01, &GpuSample::dram_active_ratio},
    {NVML_GPM_METRIC_PCIE_TX_PER_SEC, kMiB, &GpuSample::gpm_pcie_tx_bytes_per_second},
    {NVML_GPM_METRIC_PCIE_RX_PER_SEC, kMiB, &GpuSample::gpm_pcie_rx_bytes_per_second},
    {NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, kMiB, &GpuSample::nvlink_tx_bytes_per_second},
    {NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, kMiB, &GpuSample::nvlink_rx_bytes_per_second},
}};

}  // namespace

void NvmlBackend::InitGpm(size_t u) {
  NvmlUnitState& st = state_[u];
  const NvmlLib& l = *lib_;
  if (l.nvmlGpmQueryDeviceSupport == nullptr || l.nvmlGpmSampleAlloc == nullptr ||
      l.nvmlGpmSampleFree == nullptr || l.nvmlGpmMetricsGet == nullptr ||
      (units_[u].mig_instance < 0 ? l.nvmlGpmSampleGet == nullptr
                                  : l.nvmlGpmMigSampleGet == nullptr)) {
    st.gate.Missing(NvmlGroup::kGpm);
    return;
  }
  nvmlDevice_t device = st.parent_handle != nullptr ? st.parent_handle : st.handle;
  nvmlGpmSupport_t support{};
  support.version = NVML_GPM_SUPPORT_VERSION;
  if (!st.gate.Record(NvmlGroup::kGpm, l.nvmlGpmQueryDeviceSupport(device, &support))) return;
  if (support.isSupportedDevice == 0) {
    st.gate.Unsupported(NvmlGroup::kGpm);
    return;
  }
  if (l.nvmlGpmSampleAlloc(&st.gpm.prev) != NVML_SUCCESS ||
      l.nvmlGpmSampleAlloc(&st.gpm.cur) != NVML_SUCCESS) {
    FreeGpm(&st);
    st.gate.Record(NvmlGroup::kGpm, NVML_ERROR_UNKNOWN);
    return;
  }
  st.gpm.request = std::make_unique<nvmlGpmMetricsGet_t>();
  st.gpm.supported = true;
}

void NvmlBackend::FreeGpm(NvmlUnitState* st) {
  if (lib_->nvmlGpmSampleFree == nullptr) return;
  if (st->gpm.prev != nullptr) lib_->nvmlGpmSampleFree(st->gpm.prev);
  if (st->gpm.cur != nullptr) lib_->nvmlGpmSampleFree(st->gpm.cur);
  st->gpm.prev = st->gpm.cur = nullptr;
  st->gpm.supported = false;
}

void NvmlBackend::ReadGpm(size_t u, const Tick& tick, GpuSample* out) {
  NvmlUnitState& st = state_[u];
  NvmlGpmState& gpm = st.gpm;
  if (!gpm.supported || !st.gate.open(NvmlGroup::kGpm) || st.gate.lost()) return;
  const NvmlLib& l = *lib_;
  nvmlReturn_t r =
      units_[u].mig_instance < 0
          ? l.nvmlGpmSampleGet(st.handle, gpm.cur)
          : l.nvmlGpmMigSampleGet(st.parent_handle, static_cast<unsigned>(units_[u].mig_instance),
                                  gpm.cur);
  if (!st.gate.Record(NvmlGroup::kGpm, r)) {
    gpm.have_prev = false;
    return;
  }
  if (gpm.have_prev && tick.mono_s - gpm.prev_mono_s > kMinGapS) {
    nvmlGpmMetricsGet_t& req = *gpm.request;
    // Sized for the largest NVML_GPM_METRIC_MAX; we ask for ours only.
    std::memset(&req, 0, sizeof(req));
    req.version = NVML_GPM_METRICS_GET_VERSION;
    req.numMetrics = kGpmMetrics.size();
    req.sample1 = gpm.prev;
    req.sample2 = gpm.cur;
    for (size_t i = 0; i < kGpmMetrics.size(); ++i) req.metrics[i].metricId = kGpmMetrics[i].id;
    size_t values = 0;
    if (st.gate.Record(NvmlGroup::kGpm, l.nvmlGpmMetricsGet(&req))) {
      for (size_t i = 0; i < kGpmMetrics.size(); ++i) {
        if (req.metrics[i].nvmlReturn != NVML_SUCCESS) continue;
        out->*kGpmMetrics[i].field = req.metrics[i].value * kGpmMetrics[i].scale;
        ++values;
      }
    }
    if (values == 0) st.gate.Failed(NvmlGroup::kGpm);
  }
  if (!gpm.have_prev || tick.mono_s - gpm.prev_mono_s > kMinGapS) {
    std::swap(gpm.prev, gpm.cur);
    gpm.prev_mono_s = tick.mono_s;
    gpm.have_prev = true;
  }
}

}  // namespace tv

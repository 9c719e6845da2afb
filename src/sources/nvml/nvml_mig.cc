// NvmlBackend: MIG slices. Each slice of a GPU in MIG mode becomes a unit of
// its own (memory, processes, GPM where supported); the GPU stays a unit too
// (power, temperature, clocks are the whole board's).
#include <fmt/format.h>

#include "sources/nvml/nvml_backend.h"

namespace tv {

void NvmlBackend::AddMigSlices(size_t parent) {
  const NvmlLib& l = *lib_;
  nvmlDevice_t h = state_[parent].handle;
  if (l.nvmlDeviceGetMigMode == nullptr || l.nvmlDeviceGetMaxMigDeviceCount == nullptr ||
      l.nvmlDeviceGetMigDeviceHandleByIndex == nullptr) {
    return;
  }
  unsigned current = 0, pending = 0;
  if (l.nvmlDeviceGetMigMode(h, &current, &pending) != NVML_SUCCESS ||
      current != NVML_DEVICE_MIG_ENABLE) {
    return;
  }
  units_[parent].mig_enabled = true;
  unsigned max = 0;
  if (l.nvmlDeviceGetMaxMigDeviceCount(h, &max) != NVML_SUCCESS) return;
  int physical = units_[parent].physical_index;
  for (unsigned i = 0; i < max; ++i) {
    nvmlDevice_t mig = nullptr;
    nvmlReturn_t r = l.nvmlDeviceGetMigDeviceHandleByIndex(h, i, &mig);
    if (r != NVML_SUCCESS) continue;  // NOT_FOUND: an empty slot
    unsigned gi = i;
    if (l.nvmlDeviceGetGpuInstanceId != nullptr) l.nvmlDeviceGetGpuInstanceId(mig, &gi);
    GpuUnit& unit = units_.emplace_back();
    NvmlUnitState& st = state_.emplace_back();
    unit.physical_index = physical;
    unit.mig_instance = static_cast<int>(gi);
    unit.parent = static_cast<int>(parent);
    st.handle = mig;
    st.parent_handle = h;
    FillStatic(&unit, &st);
    if (unit.name.empty()) unit.name = fmt::format("{} MIG {}", units_[parent].name, gi);
    unit.compute_capability = units_[parent].compute_capability;
    InitGpm(units_.size() - 1);
  }
}

}  // namespace tv

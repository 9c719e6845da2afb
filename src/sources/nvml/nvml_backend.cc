#include "sources/nvml/nvml_backend.h"

#include <fmt/format.h>

namespace tv {
namespace {

template <typename Fn, typename... Args>
std::string ReadString(Fn fn, Args... args) {
  if (fn == nullptr) return {};
  char buf[96] = {};
  if (fn(args..., buf, sizeof(buf)) != NVML_SUCCESS) return {};
  return buf;
}

}  // namespace

std::unique_ptr<NvmlBackend> NvmlBackend::Open(const NvmlOptions& options, Status* status,
                                               std::string* detail) {
  std::unique_ptr<NvmlLib> lib = NvmlLib::Open(options.library, status, detail);
  if (lib == nullptr) return nullptr;
  std::unique_ptr<NvmlBackend> backend(new NvmlBackend(std::move(lib)));
  const NvmlLib& l = *backend->lib_;
  unsigned count = 0;
  nvmlReturn_t r = l.nvmlDeviceGetCount_v2(&count);
  if (r != NVML_SUCCESS) {
    *status = Status::Unavailable(
        fmt::format("NVML cannot count GPUs (nvmlDeviceGetCount: {}): GPU metrics off, host "
                    "metrics go on",
                    l.Error(r)));
    return nullptr;
  }
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t handle = nullptr;
    r = l.nvmlDeviceGetHandleByIndex_v2(i, &handle);
    if (r == NVML_ERROR_NO_PERMISSION) {
      *status = Status::PermissionDenied(fmt::format(
          "no permission to open GPU {} (nvmlDeviceGetHandleByIndex: {}): the user needs "
          "read-write access to /dev/nvidia{}",
          i, l.Error(r), i));
      continue;
    }
    if (r != NVML_SUCCESS) continue;  // e.g. GPU_IS_LOST at start: leave it out
    backend->AddGpu(i, handle, options.mig);
  }
  if (backend->units_.empty()) {
    if (status->ok()) {
      *status =
          Status::NotFound("NVML found no usable NVIDIA GPU: GPU metrics off, host metrics go on");
    }
    return nullptr;
  }
  *status = Status::Ok();
  return backend;
}

NvmlBackend::~NvmlBackend() {
  for (NvmlUnitState& st : state_) FreeGpm(&st);
}

void NvmlBackend::AddGpu(unsigned index, nvmlDevice_t handle, bool mig) {
  GpuUnit& unit = units_.emplace_back();
  NvmlUnitState& st = state_.emplace_back();
  unit.physical_index = static_cast<int>(index);
  st.handle = handle;
  size_t u = units_.size() - 1;
  // GPM first: where it measures PCIe, the probe read skips the 20 ms PCIe counter.
  InitGpm(u);
  FillStatic(&unit, &st);
  if (mig) AddMigSlices(u);
}

void NvmlBackend::FillStatic(GpuUnit* unit, NvmlUnitState* st) {
  const NvmlLib& l = *lib_;
  nvmlDevice_t h = st->handle;
  unit->name = ReadString(l.nvmlDeviceGetName, h);
  unit->uuid = ReadString(l.nvmlDeviceGetUUID, h);
  unit->serial = ReadString(l.nvmlDeviceGetSerial, h);
  int major = 0, minor = 0;
  if (l.nvmlDeviceGetCudaComputeCapability &&
      l.nvmlDeviceGetCudaComputeCapability(h, &major, &minor) == NVML_SUCCESS) {
    unit->compute_capability = fmt::format("{}.{}", major, minor);
  }
  GpuSample probe;
  Tick tick;
  tick.row_tick = true;  // the slow values too: the power limit
  ReadDevice(static_cast<size_t>(&*st - state_.data()), tick, &probe);
  unit->memory_total_bytes = probe.memory_total_bytes;
  unit->power_limit_watts = probe.power_limit_watts;
  ProbeEnergySource(unit, st);
  st->gpm.have_prev = false;  // nor the probe's GPM sample
  // Per-process utilisation: where the driver's history stands, so that the
  // first scheduled read covers the time since opening.
  std::vector<GpuProcessUtil> ignored;
  ReadProcessUtilizationNow(static_cast<size_t>(st - state_.data()), &ignored);
  st->next_proc_util_s = -1;
}

void NvmlBackend::ProbeEnergySource(GpuUnit* unit, NvmlUnitState* st) {
  if (st->gate.state(NvmlGroup::kEnergy) == MetricGate::State::kOk) {
    unit->energy_source = "counter";
  } else if (st->gate.state(NvmlGroup::kPower) == MetricGate::State::kOk) {
    unit->energy_source = "integrated";
  } else {
    unit->energy_source = "none";
  }
  // The probe read must not count as the start of monitoring.
  st->energy = NvmlEnergy{};
}

GpuDriverInfo NvmlBackend::DriverInfo() const {
  const NvmlLib& l = *lib_;
  GpuDriverInfo d;
  d.backend = "nvml";
  d.library = l.path();
  d.driver_version = ReadString(l.nvmlSystemGetDriverVersion);
  d.nvml_version = ReadString(l.nvmlSystemGetNVMLVersion);
  int cuda = 0;
  if (l.nvmlSystemGetCudaDriverVersion && l.nvmlSystemGetCudaDriverVersion(&cuda) == NVML_SUCCESS) {
    d.cuda_driver_version = fmt::format("{}.{}", cuda / 1000, (cuda % 1000) / 10);
  }
  d.missing_symbols = l.missing();
  return d;
}

nlohmann::json NvmlBackend::Support(size_t u) const {
  nlohmann::json j = nlohmann::json::object();
  const MetricGate& gate = state_[u].gate;
  for (size_t g = 0; g < static_cast<size_t>(NvmlGroup::kCount); ++g) {
    auto group = static_cast<NvmlGroup>(g);
    j[std::string(NvmlGroupName(group))] = std::string(GateStateName(gate.state(group)));
  }
  if (gate.lost()) j["lost"] = true;
  return j;
}

void NvmlBackend::TakeNotices(std::vector<Notice>* out) {
  for (size_t u = 0; u < units_.size(); ++u) {
    uint32_t& refused = state_[u].gate.permission_refused;
    if (refused == 0) continue;
    std::string groups;
    for (size_t g = 0; g < static_cast<size_t>(NvmlGroup::kCount); ++g) {
      if ((refused >> g & 1u) == 0) continue;
      if (!groups.empty()) groups += ", ";
      groups += NvmlGroupName(static_cast<NvmlGroup>(g));
    }
    const GpuUnit& unit = units_[u];
    out->push_back(Notice{
        "nvml",
        fmt::format("GPU {}{}: NVML refused {} (NO_PERMISSION): reading it needs root or the "
                    "driver's profiling permission (NVreg_RestrictProfilingToAdminUsers=0); "
                    "those metrics stay off",
                    unit.physical_index,
                    unit.mig_instance >= 0 ? fmt::format(" MIG {}", unit.mig_instance) : "",
                    groups)});
    refused = 0;
  }
}

}  // namespace tv

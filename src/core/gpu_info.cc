#include "core/gpu_info.h"

#include "core/json_read.h"

namespace tv {
namespace {

template <typename J>
GpuInfo InfoFrom(const J& j) {
  GpuInfo g;
  g.index = static_cast<int>(JsonInt(j, "index").value_or(0));
  g.physical_index = static_cast<int>(JsonInt(j, "physical_index").value_or(0));
  g.mig_instance = static_cast<int>(JsonInt(j, "mig_instance").value_or(-1));
  g.name = JsonString(j, "name").value_or("");
  g.id = JsonString(j, "id").value_or("");
  g.energy_source = JsonString(j, "energy_source").value_or("");
  g.uuid = JsonString(j, "uuid").value_or("");
  g.serial = JsonString(j, "serial").value_or("");
  g.compute_capability = JsonString(j, "compute_capability").value_or("");
  g.memory_total_bytes = JsonNumber(j, "memory_total_bytes");
  g.power_limit_watts = JsonNumber(j, "power_limit_watts");
  g.mig_enabled = JsonBool(j, "mig_enabled").value_or(false);
  return g;
}

template <typename J>
GpuDriverInfo DriverFrom(const J& j) {
  GpuDriverInfo d;
  d.backend = JsonString(j, "backend").value_or("");
  d.library = JsonString(j, "library").value_or("");
  d.driver_version = JsonString(j, "driver_version").value_or("");
  d.nvml_version = JsonString(j, "nvml_version").value_or("");
  d.cuda_driver_version = JsonString(j, "cuda_driver_version").value_or("");
  d.cuda_visible_devices = JsonString(j, "cuda_visible_devices");
  d.missing_symbols = JsonStrings(j, "missing_symbols");
  return d;
}

void PutString(const std::string& value, const char* key, nlohmann::ordered_json* out) {
  if (!value.empty()) (*out)[key] = value;
}

}  // namespace

nlohmann::ordered_json GpuInfoJson(const GpuInfo& g) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  PutString(g.compute_capability, "compute_capability", &j);
  j["energy_source"] = g.energy_source;
  j["id"] = g.id;
  j["index"] = g.index;
  if (g.memory_total_bytes) j["memory_total_bytes"] = *g.memory_total_bytes;
  if (g.mig_enabled) j["mig_enabled"] = true;
  j["mig_instance"] = g.mig_instance;
  j["name"] = g.name;
  j["physical_index"] = g.physical_index;
  if (g.power_limit_watts) j["power_limit_watts"] = *g.power_limit_watts;
  PutString(g.serial, "serial", &j);
  PutString(g.uuid, "uuid", &j);
  return j;
}

nlohmann::ordered_json GpuDriverJson(const GpuDriverInfo& d) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["backend"] = d.backend;
  PutString(d.cuda_driver_version, "cuda_driver_version", &j);
  if (d.cuda_visible_devices) j["cuda_visible_devices"] = *d.cuda_visible_devices;
  PutString(d.driver_version, "driver_version", &j);
  j["library"] = d.library;
  if (!d.missing_symbols.empty()) j["missing_symbols"] = d.missing_symbols;
  PutString(d.nvml_version, "nvml_version", &j);
  return j;
}

GpuInfo GpuInfoFromJson(const nlohmann::json& j) { return InfoFrom(j); }
GpuInfo GpuInfoFromJson(const nlohmann::ordered_json& j) { return InfoFrom(j); }
GpuDriverInfo GpuDriverFromJson(const nlohmann::json& j) { return DriverFrom(j); }
GpuDriverInfo GpuDriverFromJson(const nlohmann::ordered_json& j) { return DriverFrom(j); }

std::string GpuModelOf(const std::vector<GpuInfo>& gpus, int index) {
  for (const GpuInfo& g : gpus) {
    if (g.index == index) return g.name;
  }
  return "";
}

}  // namespace tv

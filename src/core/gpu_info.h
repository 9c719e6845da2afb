// GpuInfo: what one watched GPU (or MIG slice) is, and GpuDriverInfo: the
// driver library behind them, as meta.json's `gpus[]` and `gpu_driver` hold
// them (docs/schema.md "meta.json") and `check` shows them. The GPU source
// fills them once; the run's meta record, the exporters' labels, cost (the
// model's price) and the report read them. Each has one way to JSON and one
// way back. Pure data and pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tv {

struct GpuInfo {
  int index = 0;           // the CUDA index the job sees
  int physical_index = 0;  // the driver's index
  int mig_instance = -1;   // GPU instance id of a MIG slice; -1: the whole GPU
  std::string name;        // the model, "NVIDIA H100 80GB HBM3"
  std::string id;          // "gpu-<hash of the UUID>", stable and not secret
  // "counter" (the driver's energy counter), "integrated" (power over time) or "none".
  std::string energy_source;
  std::string uuid;                // only when real ids were asked for; empty: not said
  std::string serial;              // the same
  std::string compute_capability;  // "9.0"; empty: unknown
  std::optional<double> memory_total_bytes;
  std::optional<double> power_limit_watts;
  bool mig_enabled = false;  // a whole GPU in MIG mode
};

struct GpuDriverInfo {
  std::string backend;              // "nvml"
  std::string library;              // the library's path
  std::string driver_version;       // empty: not said
  std::string nvml_version;         // the same
  std::string cuda_driver_version;  // the same, "12.4"
  std::optional<std::string> cuda_visible_devices;
  std::vector<std::string> missing_symbols;  // functions the library lacks
};

// The JSON of each, its keys in alphabetical order (as written since 0.1.0),
// the optional ones only when known.
nlohmann::ordered_json GpuInfoJson(const GpuInfo& g);
nlohmann::ordered_json GpuDriverJson(const GpuDriverInfo& d);

// Read back leniently: a key absent or of another type leaves its default.
GpuInfo GpuInfoFromJson(const nlohmann::json& j);
GpuInfo GpuInfoFromJson(const nlohmann::ordered_json& j);
GpuDriverInfo GpuDriverFromJson(const nlohmann::json& j);
GpuDriverInfo GpuDriverFromJson(const nlohmann::ordered_json& j);

// The model of GPU `index` among `gpus` (its first unit with that index); ""
// when none has it.
std::string GpuModelOf(const std::vector<GpuInfo>& gpus, int index);

}  // namespace tv

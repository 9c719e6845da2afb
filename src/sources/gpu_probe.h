// ProbeGpus: what `trainvitals check` reports about GPUs — whether the NVIDIA
// library loads and why not, driver and library versions, and for each GPU the
// metric groups that worked. Takes two readings gpm_wait_s apart (GPM needs
// two samples more than 100 ms apart). Runs on the calling thread; never throws.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sources/gpu_source.h"

namespace tv {

// {"nvml": {"found": bool, "usable": bool, "library": path, "error": sentence,
//           "detail": the loader's words},
//  "driver_version", "nvml_version", "cuda_driver_version", "missing_symbols",
//  "gpus": [{GpuInfoJson of GpuSource::gpus(), "supports": {"util": "ok",
//            "fan": "not supported", ...}, "values": {"util_ratio": 0.5, ...}}]}
nlohmann::json ProbeGpus(const GpuSourceOptions& options, double gpm_wait_s = 0.15);

}  // namespace tv

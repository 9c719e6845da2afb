// A look at every GPU for `trainvitals pick`: its free memory now, its compute
// processes, and its busy share over the last `window_s` seconds from the
// driver's sample buffer (its history, not one instant; a driver loaded a
// moment ago is given a quarter second). A GPU in MIG mode is surveyed as its
// slices, which are what a job can be given.
#pragma once

#include <string>
#include <vector>

#include "core/gpu_candidate.h"

namespace tv {

// Empty with *error saying why when no GPU can be read (no library, driver or
// GPU). `nvml_library`: empty for $TRAINVITALS_NVML_LIBRARY, else the driver's.
std::vector<GpuCandidate> SurveyGpus(const std::string& nvml_library, double window_s,
                                     std::string* error);

}  // namespace tv

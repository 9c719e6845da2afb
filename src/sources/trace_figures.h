// What a profiler trace shows (docs/markers.md "Profiles"): the Chrome trace
// JSON PyTorch's and Paddle's profilers export, read for the share of the
// traced steps' time spent in the data loader, in host-to-device copies, in
// the five longest operators, and with the GPU idle between kernels.
//
// Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "core/training_sample.h"

namespace tv {

// The figures of one trace's text; `steps_taken`: the steps the process
// profiled, for a trace without step ranges (its extent is then those steps).
Status TraceFiguresOf(std::string_view json, int steps_taken, TraceFigures* out);
// The figures of the trace file in `dir` (the first `*.json` in it, at most
// kMaxTraceBytes); an error saying why when there is none or it is no trace.
Status ReadTraceFigures(const std::string& dir, int steps_taken, TraceFigures* out);

inline constexpr size_t kMaxTraceBytes = size_t{64} << 20;

}  // namespace tv

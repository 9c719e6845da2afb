// What a profiler trace shows (docs/markers.md "Profiles"): the Chrome trace
// JSON PyTorch's and Paddle's profilers export, and TensorFlow's xplane
// (sources/xplane.h), read for the share of the
// traced steps' time spent in the data loader, in host-to-device copies, in
// the five longest operators, and with the GPU idle between kernels.
//
// Thread-safe: pure functions.
#pragma once

#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/training_sample.h"

namespace tv {

// One range of a trace, in microseconds from the trace's own origin.
struct TraceSpan {
  double ts = 0;
  double dur = 0;
  std::string name;
};

// A trace's ranges by what they are, whatever the profiler's format.
struct TraceSpans {
  std::vector<TraceSpan> steps;    // one per step: "ProfilerStep#3"
  std::vector<TraceSpan> loader;   // the training thread waiting for its next batch
  std::vector<TraceSpan> h2d;      // host-to-device copies (also in `device`)
  std::vector<TraceSpan> device;   // kernels and copies on the GPU
  std::vector<TraceSpan> kernels;  // the kernels alone (also in `device`)
  std::map<std::string, std::vector<TraceSpan>> ops;  // operators, by thread
  // The extent of everything in the trace.
  double first = std::numeric_limits<double>::infinity();
  double last = -std::numeric_limits<double>::infinity();
  void Extend(const TraceSpan& s);
};

// The figures of a trace's ranges (sorted in place); `steps_taken`: the
// steps the process profiled, for a trace without step ranges (its extent is
// then those steps).
Status FiguresOfSpans(TraceSpans* spans, int steps_taken, TraceFigures* out);
// The figures of one Chrome trace's text (PyTorch's and Paddle's profilers).
Status TraceFiguresOf(std::string_view json, int steps_taken, TraceFigures* out);
// The figures of the trace file in `dir` (the first `*.json` in it, else
// TensorFlow's `*.xplane.pb` below it, at most kMaxTraceBytes); an error
// saying why when there is none or it is no trace.
Status ReadTraceFigures(const std::string& dir, int steps_taken, TraceFigures* out);

inline constexpr size_t kMaxTraceBytes = size_t{64} << 20;

}  // namespace tv

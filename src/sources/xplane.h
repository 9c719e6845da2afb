// TensorFlow's trace (`*.xplane.pb`, what `tf.profiler.experimental` writes
// for TensorBoard's Profile tab), read for the same figures as a Chrome trace
// (sources/trace_figures.h). The file is an XSpace protobuf; the few fields
// read here are decoded from the wire format directly (field numbers from
// tsl/profiler/protobuf/xplane.proto), so no protobuf library is needed.
//
// What counts as what:
// - the wait for input: `IteratorGetNextOp::DoCompute`, the training step's
//   call into the tf.data iterator (it returns at once when the prefetch
//   buffer holds a batch);
// - operators: the executor threads' (`tf_Compute`, `tf_inter_op`) events
//   named `scope/name:Type`, summed by Type;
// - GPU work: the events of a `/device:GPU:N` plane's streams, copies named
//   with `HtoD`/`H2D` as host-to-device, those not named as copies
//   (`Memcpy...`, `Memset...`) as kernels;
// - the extent: from the profile's start to its stop (the "Task Environment"
//   plane's `profile_start_time` and `profile_stop_time`), spread over the
//   steps taken under it; TensorFlow writes no step ranges for Keras.
//
// Thread-safe: pure functions.
#pragma once

#include <string_view>

#include "core/status.h"
#include "core/training_sample.h"
#include "sources/trace_figures.h"

namespace tv {

// The ranges of an XSpace's bytes, in microseconds from the profile's start.
Status XPlaneSpansOf(std::string_view bytes, TraceSpans* out);
// Its figures; `steps_taken`: the steps the process profiled.
Status XPlaneFiguresOf(std::string_view bytes, int steps_taken, TraceFigures* out);

}  // namespace tv

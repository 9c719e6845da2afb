// TraceReads: the traces of `profile` events, read off the sampler thread. A
// trace can be tens of megabytes (up to kMaxTraceBytes); reading it on the
// sampler thread would hold up a tick. Each read runs on a thread of its own
// (they are rare: once per finding id a run, or when asked), and its event
// comes back at a later tick, in the order the events came.
//
// Thread safety: one thread (the sampler's) calls it; the reads touch only
// their own event until Done hands it back.
#pragma once

#include <deque>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "core/training_sample.h"

namespace tv {

class TraceReads {
 public:
  explicit TraceReads(std::string run_dir) : run_dir_(std::move(run_dir)) {}
  ~TraceReads();  // waits for the reads in progress
  TraceReads(const TraceReads&) = delete;
  TraceReads& operator=(const TraceReads&) = delete;

  // Reads the trace of `event` (its `profile` set) into its figures, or its
  // trace_error, on a thread of its own.
  void Start(TrainingEvent event);
  // Appends to `out` the events whose trace was read, in the order they were
  // started, up to the first still being read; with `wait`, all of them.
  void Done(std::vector<TrainingEvent>* out, bool wait);

 private:
  struct Read {
    std::unique_ptr<TrainingEvent> event;
    std::future<void> done;
  };
  std::string run_dir_;
  std::deque<Read> reads_;
};

}  // namespace tv

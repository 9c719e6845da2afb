// DataWaitMeter: one training process's data-wait share between two reads of
// its step slot (markers/protocol.h). The slot holds the waits that ended
// (wait_ns) and the start of one in progress (wait_start_ns); the meter credits
// the part of a wait in progress that has passed by each read, so a wait that
// spans ticks is spread over them, and keeps the previous reading to take the
// difference. Pure arithmetic on the values read; the caller reads the slot.
//
// Thread safety: none; one meter per slot, used on the sampler thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "markers/protocol.h"

namespace tv {

// What a step slot says of data wait at one instant.
struct WaitReading {
  uint32_t flags = 0;          // kWaitMeasured | kWaitTimed
  uint64_t wait_ns = 0;        // over the waits that ended
  uint64_t wait_start_ns = 0;  // a wait in progress began; 0: none
};

// Reads the slot's three wait fields as one consistent reading: a wait that
// ends between the loads is not counted twice nor missed.
WaitReading ReadWait(const StepSlot& slot);

class DataWaitMeter {
 public:
  // The share of the time since the previous reading (0..1) that the process
  // spent waiting for data, with `now_ns` the CLOCK_MONOTONIC time of this
  // reading. Absent when the process does not measure data wait, when it is
  // outside its timed loop and did not wait since the previous reading (an
  // eval phase, between epochs), and at the first reading.
  std::optional<double> Update(const WaitReading& r, uint64_t now_ns);
  // Forgets the previous reading (the slot changed hands).
  void Reset() { *this = DataWaitMeter(); }

 private:
  bool have_ = false;
  uint64_t total_ns_ = 0;  // wait_ns plus the passed part of a wait in progress
  uint64_t now_ns_ = 0;
};

}  // namespace tv

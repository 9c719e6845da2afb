// Source: reads one part of the machine into a Sample. Sources only read; they
// own no thread and are called on the sampler thread only. A source keeps the
// previous counters it needs for rates. It never throws: what it cannot read is
// left absent, and a lasting problem is reported once through Notice.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/sample.h"

namespace tv {

struct Tick {
  double mono_s = 0;      // monotonic time of this tick
  bool row_tick = false;  // this tick closes a row: read slow-moving values now
};

// A problem worth saying once (in events.jsonl and on stderr), e.g. RAPL unreadable.
struct Notice {
  std::string source;
  std::string message;
};

class Source {
 public:
  virtual ~Source() = default;
  virtual std::string_view name() const = 0;
  virtual void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) = 0;
  // Sampling stops: adds what is still waiting to be read and is not a reading
  // of the job (the markers and step counts a training process left just
  // before it exited; the host's counters a source reads once a row, which the
  // last, partial row has not had yet) to `out`, which holds the last tick's
  // sample. True if it added any: `out` then joins the last row.
  virtual bool Flush(Sample* out) {
    (void)out;
    return false;
  }
};

}  // namespace tv

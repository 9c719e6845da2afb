// Sink: consumes rows and events, on the sink thread only (see SinkThread).
// A sink never reaches back into a source. Failures are the sink's to handle:
// log once, keep going.
#pragma once

#include "core/event.h"
#include "core/row.h"

namespace tv {

class Sink {
 public:
  virtual ~Sink() = default;
  virtual void OnRow(const Row& row) { (void)row; }
  virtual void OnEvent(const Event& event) { (void)event; }
  // The run ended; `final_row` is the whole-run reduction. Flush and close.
  virtual void OnClose() {}
};

}  // namespace tv

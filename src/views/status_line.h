// StatusLine: what a run says on stderr while it goes. When stderr is a
// terminal (`live`), a one-line status (elapsed, job CPU and memory, host
// memory, per GPU load, memory and temperature) rewritten in place each row and
// cleared before the summary. Always (unless --quiet, when it is not made at
// all), one line for each source that cannot read ("trainvitals: ...").
//
// Thread safety: a Sink, used on the sink thread only.
#pragma once

#include <string>

#include "core/sink.h"

namespace tv {

class StatusLine final : public Sink {
 public:
  StatusLine(int fd, bool live) : fd_(fd), live_(live) {}
  void OnRow(const Row& row) override;
  void OnEvent(const Event& event) override;
  void OnClose() override;

 private:
  void Clear();
  int fd_;
  bool live_;
  bool shown_ = false;
};

// The text of the status line for `row` (no control characters).
std::string StatusText(const Row& row);

}  // namespace tv

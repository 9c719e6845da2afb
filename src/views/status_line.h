// StatusLine: a live one-line status on stderr (elapsed, job CPU and memory,
// host memory, per GPU load and memory), rewritten in place each row. Only when
// stderr is a terminal and the user did not ask for --quiet; the line is cleared
// before the summary is printed.
//
// Thread safety: a Sink, used on the sink thread only.
#pragma once

#include <string>

#include "core/sink.h"

namespace tv {

class StatusLine final : public Sink {
 public:
  explicit StatusLine(int fd) : fd_(fd) {}
  void OnRow(const Row& row) override;
  void OnClose() override;

 private:
  int fd_;
  bool shown_ = false;
};

// The text of the status line for `row` (no control characters).
std::string StatusText(const Row& row);

}  // namespace tv

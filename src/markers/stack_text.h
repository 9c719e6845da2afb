// The Python stacks a training process writes when asked (Python's
// faulthandler, docs/markers.md "Stacks"): the threads and their frames, and
// where the main thread waits, named as a user looks for it: in a collective,
// a DataLoader, a lock, I/O, a sleep, or running code.
//
// Thread-safe: pure functions; reading a script's line is the caller's.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/training_sample.h"

namespace tv {

struct StackFrame {
  std::string file;      // as Python names it: "/job/train.py"
  int line = 0;          // 0: not known
  std::string function;  // "main", "<module>"
};

struct StackThread {
  bool current = false;            // the thread that wrote the stacks
  std::vector<StackFrame> frames;  // the most recent call first
};

// The threads in `text`, in its order; frames of lines it does not know are
// skipped, a thread with no frame kept.
std::vector<StackThread> ParseStacks(std::string_view text);

// The line `line` of the script `file`, as the caller can read it (empty when not).
using SourceLine = std::function<std::string(const std::string& file, int line)>;

// Where the main thread (the one running `<module>`, else the current one)
// waits: StackWait's waits_in, frame, at, code and threads. Empty `waits_in`
// when `threads` holds no frame.
StackWait WhereItWaits(const std::vector<StackThread>& threads, const SourceLine& source_line);

}  // namespace tv

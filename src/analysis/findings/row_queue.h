// RowQueue: a run directory's rows read and parsed on a thread of its own, a
// few rows ahead of the one that judges them, so that several nodes' files
// (joined.h) are parsed on several cores while one thread judges them all.
//
// Thread safety: Next from one thread; the reading thread is the queue's own.
#pragma once

#include <memory>
#include <string>

#include "analysis/findings/frame.h"
#include "analysis/findings/replay.h"

namespace tv {

class RowQueue {
 public:
  // Opens samples.jsonl of `run_dir` (RowReader's errors, thrown here) and
  // starts reading; the lines it skips are counted in `*v`, which the caller
  // reads only once Next has returned false.
  RowQueue(const std::string& run_dir, Verdict* v);
  ~RowQueue();  // stops the reading thread
  RowQueue(const RowQueue&) = delete;
  RowQueue& operator=(const RowQueue&) = delete;

  // The next row into `frame`; false after the last. Throws what the reader
  // threw (a file that could not be read).
  bool Next(Frame* frame);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tv

// SinkThread: runs sinks on their own thread, fed from a bounded queue, so the
// sampler never blocks on a slow disk or network. When the queue is full a row
// is dropped and counted; events are small and rare, and are kept unless the
// queue holds kMaxItems of them.
//
// The thread is named "tv-sinks". A sink that throws is turned off (said once
// on stderr); the others go on.
//
// Thread safety: Push* may be called from any thread; sinks run on the sink
// thread only.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

#include "core/sink.h"

namespace tv {

class SinkThread {
 public:
  static constexpr size_t kMaxRows = 64;
  static constexpr size_t kMaxItems = 4096;

  explicit SinkThread(std::vector<Sink*> sinks);
  ~SinkThread();
  // Starts the thread.
  void Start();
  // Never blocks. Returns false when the row was dropped.
  bool PushRow(Row row);
  bool PushEvent(Event event);
  // Drains what is queued, calls OnClose on every sink, joins the thread.
  void Close();
  uint64_t dropped_rows() const { return dropped_rows_.load(); }

 private:
  void Loop();
  // Calls `call` on every sink still on, turning off one that throws.
  void Each(const std::function<void(Sink*)>& call);
  std::vector<Sink*> sinks_;
  std::vector<bool> failed_;  // sink thread only
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::variant<Row, Event>> queue_;
  size_t queued_rows_ = 0;
  bool closing_ = false;
  std::atomic<uint64_t> dropped_rows_{0};
  std::thread thread_;
};

}  // namespace tv

// The GPU driver opened on a thread of its own (dlopen, nvmlInit and the
// devices' enumeration: about 50 ms on an H200 host), so that `run` starts its
// command at once and a command that ends sooner is not kept waiting for it.
//
// Thread safety: Wait, Take and InFlight from any thread; the opening thread
// touches nothing but the shared state, and a source it opened after everyone
// stopped waiting is destroyed on that thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/source.h"
#include "sources/gpu_source.h"

namespace tv {

class GpuOpening : public std::enable_shared_from_this<GpuOpening> {
 public:
  // Starts opening on the thread tv-gpu-open (where no thread can be had, on
  // the caller's, before it returns).
  static std::shared_ptr<GpuOpening> Start(GpuSourceOptions options);

  // Waits until the driver answered (opened or not), asking `give_up` every
  // few milliseconds whether to stop waiting. True when it answered.
  bool Wait(const std::function<bool()>& give_up);
  // What it answered, once: the source, or nullptr and the notice why not.
  std::unique_ptr<GpuSource> Take(std::vector<Notice>* notices);

  // Openings of this process whose thread has not finished: a process that
  // ends with one still running leaves with _exit, so that the driver's
  // static destructors do not run under it.
  static int InFlight() { return in_flight_.load(); }

  explicit GpuOpening(GpuSourceOptions options) : options_(std::move(options)) {}

 private:
  void Open();
  void OpenGuarded();  // Open, then done_ and the waiters told, whatever happened

  const GpuSourceOptions options_;
  std::mutex mu_;
  std::condition_variable answered_;
  bool done_ = false;
  std::unique_ptr<GpuSource> source_;
  std::vector<Notice> notices_;
  static std::atomic<int> in_flight_;
};

}  // namespace tv

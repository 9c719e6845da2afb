// Clock: the seam for time. The sampler asks a Clock for the time and sleeps on
// it, so tests drive a FakeClock and never wait for real seconds.
//
// Thread safety: SystemClock is safe from any thread. FakeClock's time moves only
// when a sleeper sleeps or a test calls Advance; it is safe from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace tv {

// A one-shot stop flag that wakes sleepers. Safe from any thread.
class StopSignal {
 public:
  void Stop();
  bool stopped() const { return stopped_.load(std::memory_order_acquire); }

 private:
  friend class SystemClock;
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds on a monotonic clock with an arbitrary origin.
  virtual double MonotonicSeconds() = 0;
  // Unix time in seconds.
  virtual double WallSeconds() = 0;
  // Sleeps until MonotonicSeconds() >= deadline or `stop` is signalled.
  // Returns false when stopped.
  virtual bool SleepUntil(double deadline, StopSignal& stop) = 0;

  static Clock* Default();
};

class SystemClock final : public Clock {
 public:
  double MonotonicSeconds() override;
  double WallSeconds() override;
  bool SleepUntil(double deadline, StopSignal& stop) override;
};

// Time that moves only when asked: SleepUntil jumps straight to its deadline.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(double wall_origin = 1'700'000'000.0) : wall_origin_(wall_origin) {}
  double MonotonicSeconds() override { return now_.load(); }
  double WallSeconds() override { return wall_origin_ + now_.load(); }
  bool SleepUntil(double deadline, StopSignal& stop) override;
  void Advance(double seconds);

 private:
  double wall_origin_;
  std::atomic<double> now_{0.0};
};

}  // namespace tv

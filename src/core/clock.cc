#include "core/clock.h"

#include <chrono>

namespace tv {

void StopSignal::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

Clock* Clock::Default() {
  static SystemClock clock;
  return &clock;
}

double SystemClock::MonotonicSeconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

double SystemClock::WallSeconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

bool SystemClock::SleepUntil(double deadline, StopSignal& stop) {
  using namespace std::chrono;
  auto when =
      steady_clock::time_point(duration_cast<steady_clock::duration>(duration<double>(deadline)));
  std::unique_lock<std::mutex> lock(stop.mu_);
  stop.cv_.wait_until(lock, when, [&] { return stop.stopped_.load(); });
  return !stop.stopped_.load();
}

bool FakeClock::SleepUntil(double deadline, StopSignal& stop) {
  if (stop.stopped()) return false;
  double now = now_.load();
  while (now < deadline && !now_.compare_exchange_weak(now, deadline)) {
  }
  return !stop.stopped();
}

void FakeClock::Advance(double seconds) {
  double now = now_.load();
  while (!now_.compare_exchange_weak(now, now + seconds)) {
  }
}

}  // namespace tv

// Sampler: the one thread that reads the sources at a fixed rate (default 10 Hz)
// on a drift-free schedule (tick k is due at start + k/hz, late ticks are skipped,
// never bunched), reduces samples into one Row per interval (default 1 s) and
// hands rows and events to the SinkThread without ever blocking on it.
//
// Thread safety: Start/Stop from one controlling thread; sources run on the
// sampler thread only; run_row() is valid after Stop().
#pragma once

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "core/aggregator.h"
#include "core/clock.h"
#include "core/sink_thread.h"
#include "core/source.h"

namespace tv {

// Sees every sample on the sampler thread, after the sources: analysis that
// needs the full rate (per-epoch figures). Must be quick and never block;
// events it returns go to the sinks.
class SampleObserver {
 public:
  virtual ~SampleObserver() = default;
  virtual void OnSample(const Sample& sample, std::vector<Event>* events) = 0;
  // Sampling stopped at unix time `t`.
  virtual void OnFinish(double t, std::vector<Event>* events) { (void)t, (void)events; }
};

struct SamplerOptions {
  double sample_hz = 10;
  double interval_s = 1;
};

class Sampler {
 public:
  Sampler(SamplerOptions options, Clock* clock, std::vector<std::unique_ptr<Source>> sources,
          SinkThread* sinks, SampleObserver* observer = nullptr);
  ~Sampler();

  // Starts the thread; the first tick is taken at once.
  void Start();
  // Stops the thread and emits the partial last row. Idempotent.
  void Stop();

  // Runs `ticks` ticks on the calling thread (tests, with a FakeClock).
  void RunTicks(int ticks);

  // Whole-run reduction; call after Stop.
  const Row& run_row() const { return run_row_; }
  double start_wall() const { return start_wall_; }
  uint64_t ticks() const { return ticks_.load(); }
  uint64_t late_ticks() const { return late_ticks_.load(); }
  // Ticks that close a row, derived from the options.
  int ticks_per_row() const { return ticks_per_row_; }

 private:
  void Loop(int max_ticks);
  void TickOnce(int64_t k);
  // Hands the current sample to the observer and its events to the sinks.
  void ObserveSample();
  // Events for the markers that arrived this tick (epoch and phase boundaries,
  // clients starting and ending) and a malformed datagram's first fault.
  void PushMarkerEvents();
  void Finish();

  SamplerOptions options_;
  Clock* clock_;
  std::vector<std::unique_ptr<Source>> sources_;
  SinkThread* sinks_;
  SampleObserver* observer_;
  std::vector<Event> observer_events_;
  double period_s_;
  int ticks_per_row_;
  int64_t next_row_tick_;  // k + 1 of the tick that closes the next row, or the first after it
  double start_mono_ = 0;
  double start_wall_ = 0;
  bool started_ = false;
  bool finished_ = false;
  Aggregator interval_;
  Aggregator run_;
  Row run_row_;
  Sample sample_;
  std::vector<Notice> notices_;
  StopSignal stop_;
  std::atomic<uint64_t> ticks_{0};
  std::atomic<uint64_t> late_ticks_{0};
  std::thread thread_;
};

// Fills values that combine sources: host.memory_limit_bytes falls back to
// MemTotal (the CPU source sets host.cpu_limit_cores, the cgroup source lowers
// both), and the job's ratios of those limits.
void DeriveRatios(Sample* sample);

}  // namespace tv

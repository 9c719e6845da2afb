// Sampler: the one thread that reads the sources at a fixed rate (default 10 Hz)
// on a drift-free schedule (tick k is due at start + k/hz, late ticks are skipped,
// never bunched), reduces samples into one Row per interval (default 1 s) and
// hands rows and events to the SinkThread without ever blocking on it.
//
// Faults: a source or observer that throws is turned off (said once in
// events.jsonl) and the rest goes on; nothing leaves the thread. Stop waits at
// most `stop_timeout_s` for the thread: one stuck in a source (a GPU driver call
// that never returns) is left behind and the run ends with what was sampled.
//
// Thread safety: Start/Stop from one controlling thread; sources run on the
// sampler thread only; run_row() is valid after Stop().
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
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
  // A row closed (after the samples it holds were observed), before it goes to
  // the sinks: analysis that judges rows, and may annotate them.
  virtual void OnRow(Row* row, std::vector<Event>* events) { (void)row, (void)events; }
  // Sampling stopped at unix time `t`.
  virtual void OnFinish(double t, std::vector<Event>* events) { (void)t, (void)events; }
};

struct SamplerOptions {
  double sample_hz = 10;
  double interval_s = 1;
  // How long Stop waits for a tick in progress before leaving the thread behind.
  double stop_timeout_s = 5;
};

class Sampler {
 public:
  // Observers see each sample in this order.
  Sampler(SamplerOptions options, Clock* clock, std::vector<std::unique_ptr<Source>> sources,
          SinkThread* sinks, std::vector<SampleObserver*> observers = {});
  // Stops; see Stop for a thread left behind.
  ~Sampler();

  // Starts the thread "tv-sampler"; the first tick is taken at once.
  void Start();
  // Stops the thread and emits the partial last row. Idempotent. Returns false
  // when the thread did not end within stop_timeout_s (stuck in a source): it
  // is left running, so this Sampler (and its sources) must then be kept alive,
  // never destroyed (Session leaks it); the row holds what was sampled before.
  bool Stop();

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
  // Reads every source still on into sample_, turning off one that throws.
  void ReadSources(const Tick& tick);
  // Hands the current sample to the observers and their events to the sinks.
  void ObserveSample();
  // Hands a closed row to the observers, then it and their events to the sinks.
  void PushRow(Row row);
  // Runs `observe` on each observer still on, turning off one that throws.
  template <typename Observe>
  void EachObserver(Observe&& observe);
  // Waits (bounded) for the thread to end; false when it had to be left behind.
  bool WaitForThread();
  // `complete`: the thread ended, so the sources may be flushed.
  void Finish(bool complete);

  SamplerOptions options_;
  Clock* clock_;
  std::vector<std::unique_ptr<Source>> sources_;
  std::vector<bool> source_failed_;
  SinkThread* sinks_;
  std::vector<SampleObserver*> observers_;
  std::vector<bool> observer_failed_;
  std::vector<Event> observer_events_;
  double period_s_;
  int ticks_per_row_;
  int64_t next_row_tick_;  // k + 1 of the tick that closes the next row, or the first after it
  double start_mono_ = 0;
  double start_wall_ = 0;
  bool started_ = false;
  bool finished_ = false;
  // Held by the sampler thread from the end of a tick's reads to the end of the
  // tick, and by Finish: once `abandoned_` is set, a thread that comes back
  // from a stuck source touches nothing more.
  std::mutex state_mu_;
  bool abandoned_ = false;
  Aggregator interval_;
  Aggregator run_;
  Row run_row_;
  Sample sample_;
  std::vector<Notice> notices_;
  StopSignal stop_;
  std::atomic<uint64_t> ticks_{0};
  std::atomic<uint64_t> late_ticks_{0};
  std::mutex done_mu_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

// Fills values that combine sources: host.memory_limit_bytes falls back to
// MemTotal (the CPU source sets host.cpu_limit_cores, the cgroup source lowers
// both), and the job's ratios of those limits.
void DeriveRatios(Sample* sample);

}  // namespace tv

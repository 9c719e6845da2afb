// PssScheduler: decides when the process source reads PSS (/proc/PID/smaps_rollup)
// for the whole tree. Reading PSS walks the target's page tables under its mmap
// lock (about 10 ms per GiB mapped), so it runs in rounds paced by their cost:
//  - after the tree's membership changed, a round as soon as the last one is at
//    least `min_spacing_s` old (new workers should not wait for a slow refresh);
//  - otherwise every cost / cpu_budget_ratio seconds, clamped to
//    [min_periodic_s, max_periodic_s], so PSS reading uses about
//    `cpu_budget_ratio` of one core on average.
// Time is whatever monotonic seconds the caller passes (the tick's mono_s), so
// the pacing is deterministic under test.
//
// Thread safety: not thread-safe; owned by one source on the sampler thread.
#pragma once

namespace tv {

struct PssPacing {
  double min_spacing_s = 0.5;
  double cpu_budget_ratio = 0.0005;  // 0.05% of one core
  double min_periodic_s = 1;
  double max_periodic_s = 30;
};

class PssScheduler {
 public:
  explicit PssScheduler(PssPacing pacing = {}) : pacing_(pacing) {}

  // True when a round should run at `now_s`. `membership_changed` says whether a
  // process joined or left since the last round.
  bool Due(double now_s, bool membership_changed) const;

  // Records a round that ran at `now_s` and cost `cpu_s` seconds of CPU.
  void RoundDone(double now_s, double cpu_s);

  // Seconds between periodic rounds, from the last round's cost.
  double periodic_spacing_s() const { return spacing_s_; }

 private:
  PssPacing pacing_;
  bool ran_ = false;
  double last_round_s_ = 0;
  double spacing_s_ = 0;
};

// CPU seconds used by the calling thread (CLOCK_THREAD_CPUTIME_ID): the default
// way to measure the cost of a round.
double ThreadCpuSeconds();

}  // namespace tv

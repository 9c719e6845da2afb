// PssScheduler: decides when the process source reads PSS (/proc/PID/smaps_rollup)
// for the whole tree. Reading PSS walks the target's page tables under its mmap
// lock (about 10 ms per GiB mapped), so it runs in rounds paced by their cost:
//  - after the tree's membership changed, a round at once while the burst
//    budget lasts: a freshly forked worker shares its parent's pages, and until
//    PSS is read again both would be counted in full (the job would seem to
//    double). The budget holds `burst_cpu_s` of CPU and refills at
//    `cpu_budget_ratio`; once spent, rounds after a change wait until the last
//    one is at least `min_spacing_s` old;
//  - `settle_after_s` after a round that followed a change, one more (burst
//    budget allowing): a new worker goes on mapping pages it shares with its
//    parent (interpreter, libraries), which its RSS counts in full and its PSS
//    only in part, so the estimate between rounds drifts up while it settles;
//  - otherwise every cost / cpu_budget_ratio seconds, clamped to
//    [min_periodic_s, max_periodic_s for every `processes_per_period` processes
//    read], so PSS reading uses at most about `cpu_budget_ratio` of one core on
//    average: the freshness cap grows with the tree, whose rounds cost more, so
//    that a large tree's rounds cost no more a second than a small one's.
// Time is whatever monotonic seconds the caller passes (the tick's mono_s), so
// the pacing is deterministic under test.
//
// Thread safety: not thread-safe; owned by one source on the sampler thread.
#pragma once

#include <cstddef>

namespace tv {

struct PssPacing {
  double min_spacing_s = 0.5;
  double burst_cpu_s = 0.05;
  double settle_after_s = 1;
  double cpu_budget_ratio = 0.0002;  // 0.02% of one core
  double min_periodic_s = 1;
  double max_periodic_s = 30;
  double processes_per_period = 32;
};

class PssScheduler {
 public:
  explicit PssScheduler(PssPacing pacing = {}) : pacing_(pacing), burst_s_(pacing.burst_cpu_s) {}

  // True when a round should run at `now_s`. `membership_changed` says whether a
  // process joined or left since the last round.
  bool Due(double now_s, bool membership_changed) const;

  // Records a round that ran at `now_s`, read `processes` processes and cost
  // `cpu_s` seconds of CPU; `after_change` when the membership had changed
  // since the round before.
  void RoundDone(double now_s, double cpu_s, bool after_change = false, size_t processes = 1);

  // CPU seconds left in the burst budget at `now_s`.
  double burst_left_s(double now_s) const;

  // Seconds between periodic rounds, from the last round's cost.
  double periodic_spacing_s() const { return spacing_s_; }

 private:
  PssPacing pacing_;
  bool ran_ = false;
  double last_round_s_ = 0;
  double spacing_s_ = 0;
  double burst_s_ = 0;       // at last_round_s_
  double settle_at_s_ = -1;  // the settling round's time; negative: none pending
};

// CPU seconds used by the calling thread (CLOCK_THREAD_CPUTIME_ID): the default
// way to measure the cost of a round.
double ThreadCpuSeconds();

}  // namespace tv

// Memory that creeps: host-memory-leak, gpu-memory-leak, allocator-growth and
// oom-forecast, one unit since they read the same floors. Each figure gets
// floors (its lowest sample in each epoch after the first, else in each
// leak_window_s after leak_warmup_s); a leak is floors that rise by the
// Mann-Kendall test, by a Theil-Sen slope that adds leak_min_growth, and still
// rise in their newer half. A leak or forecast that opens is also a
// MemoryRisk for the training processes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "analysis/findings/rule.h"
#include "analysis/findings/trend.h"
#include "store/memory_trend_record.h"

namespace tv {

// Whom a memory finding is about; its subject and words are made only when
// one opens (a row makes no strings).
struct MemoryWho {
  enum class Kind { kJob, kRank, kHost, kGpuJob, kGpuAllocated, kGpu };
  Kind kind = Kind::kJob;
  int index = -1;  // the GPU, or the rank
  int pid = 0;
  bool anon = false;  // the job or rank, judged on the anonymous part of its memory
};

class MemoryRules : public Rule {
 public:
  explicit MemoryRules(const Thresholds& th) : th_(th) {}
  // Follows the lowest rank's epochs (floors by epoch, the epoch the memory
  // runs out in).
  void OnMark(const Mark& m, RuleContext& cx) override;
  void OnFrame(const Frame& f, RuleContext& cx) override;
  // Each memory figure's trend: its floors, growth per hour (and per epoch)
  // with a confidence, and whether it is a leak or not enough evidence yet.
  std::vector<MemoryTrendRecord> Trends() const;

 private:
  struct MemorySeries {
    FloorSeries floors;
    FloorTrend trend;
    bool leak = false;  // as the newest floors say
    // The trend while it last was a leak: a leak that levelled off later
    // is still reported as one, with the rate it had.
    std::optional<FloorTrend> leak_trend;
    Tracker tracker;  // its leak finding (host-memory-leak, gpu-memory-leak)
    // Host memory (the job's, a rank's): whether its floors are of the
    // anonymous part of the PSS; empty until a row gave either.
    std::optional<bool> anon;
  };
  struct GpuMemory {
    MemorySeries job, allocated, reserved;
    Tracker growth, forecast;
  };
  struct Forecast {
    double slope_per_s = 0;
    std::optional<double> slope_per_epoch;
    double room_bytes = 0;
    double limit_bytes = 0;
    double seconds_left = 0;
    std::optional<int64_t> epoch;  // of the call, 1-based, the memory runs out in
    std::optional<int64_t> planned_epochs;
    std::optional<double> run_left_s;  // until the planned last epoch ends
  };
  std::optional<int64_t> FloorUnit(const Frame& f);
  // What a row gives the series of the job's or a rank's host memory: the
  // anonymous and shared-memory part of its PSS where rows have it (the pages
  // of the libraries it maps move to it as other processes mapping them
  // exit), else its PSS. The first row with either decides, so the floors
  // are all of one figure.
  static std::optional<double> HostFloorValue(MemorySeries& s, std::optional<double> anon,
                                              std::optional<double> pss);
  bool FeedSeries(MemorySeries& s, std::optional<double> value, double t, int64_t unit);
  void JudgeLeak(MemorySeries& s, FindingId id, MemoryWho who, double t, RuleContext& cx);
  void JudgeForecast(Tracker& tr, const MemorySeries* leaking, double room, double limit,
                     MemoryWho who, double t, RuleContext& cx);
  Forecast ForecastOf(const MemorySeries& s, double room, double limit, double t) const;
  // The trend of `s` (its subject and figure left for the caller).
  MemoryTrendRecord TrendRecord(const MemorySeries& s) const;

  Thresholds th_;
  MemorySeries host_memory_series_;
  Tracker host_forecast_;
  std::map<int, GpuMemory> gpu_memory_;
  std::map<int, MemorySeries> rank_memory_;  // by pid, with several training processes
  std::map<int, int> rank_of_pid_;
  bool floors_by_epoch_ = false;
  std::optional<int64_t> epoch_now_;  // the lowest rank's newest epoch begun
  int64_t epochs_begun_ = 0;
  // The lowest rank's current framework call: its planned epochs and when each
  // of its epochs began (for the epoch the memory runs out in).
  std::optional<int64_t> call_;
  std::optional<int64_t> planned_epochs_;
  std::vector<double> call_epoch_begins_;
};

}  // namespace tv

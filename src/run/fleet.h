// Fleet: the jobs of a node as `serve` follows them (sources/node_jobs.h fills
// each sample's node_jobs). Each job gets a sample of its own, made as a run's
// sample is (the host, its figures as `job`, its GPUs with its share as
// `job_*`), reduced into its own rows on the node's row ticks. A job that
// leaves the sample has ended; its last row is kept `linger_s` (its series
// stay on /metrics that long, so a scrape sees how it ended), then dropped.
// At most `max_jobs` are followed at once: a job seen beyond that is counted
// in Row::jobs_dropped, once, and not followed. Each job is judged by the
// findings rules of a run on its own rows (its finding events carry "job");
// its row says its findings and health score. The row it ends on carries its
// summary.json (JobRow::summary): its figures from when it was first served,
// its findings and health, and its cost at `cost_rates`.
//
// Thread safety: an observer, fed on the sampler thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/cost_observer.h"
#include "analysis/findings/observer.h"
#include "core/aggregator.h"
#include "core/sampler.h"

namespace tv {

struct FleetOptions {
  double linger_s = 300;
  size_t max_jobs = 256;
  double interval_s = 1;  // the rows' interval
  Thresholds thresholds;  // the findings' ([findings] of --config)
  CostRates cost_rates;   // the costs' ([cost] of --config)
};

// A job's own sample: the node's host figures (its memory and CPU limits
// lowered to the job's cgroup's), the job's figures, and the GPUs it has a
// share of, each with that share as job_memory_bytes, job_processes and
// job_sm_util_ratio (0 on a GPU it was given and does not use), and the
// other processes on it as other_processes and other_memory_bytes.
Sample JobSampleOf(const Sample& node, const NodeJob& job);

// The share of a GPU's time a job kept it busy (a GPU of JobSampleOf): the
// device's busy share (SM activity where measured, else its utilisation) when
// the job is alone on it; shared, the job's own SM share where the driver
// gave it, else the device's split by the number of processes.
std::optional<double> JobBusyRatio(const GpuSample& gpu);

class Fleet final : public SampleObserver {
 public:
  explicit Fleet(FleetOptions options) : options_(std::move(options)) {}
  void OnSample(const Sample& sample, std::vector<Event>* events) override;
  void OnRow(Row* row, std::vector<Event>* events) override;
  // The node's GPUs (for their prices), before the first sample.
  void set_gpus(std::vector<GpuInfo> gpus) { gpus_ = std::move(gpus); }

 private:
  struct Watch {
    std::shared_ptr<const JobIdentity> identity;
    double started_t = 0;
    std::optional<double> ended_t;
    Aggregator interval;
    // The (index, MIG instance) of each GPU its environment names, at its
    // latest sample.
    std::vector<std::pair<int, int>> allocated;
    std::shared_ptr<const JobRow> last;
    std::vector<JobSession> sessions;  // at its latest sample
    // The findings that need no markers, judged on the job's rows as a run's
    // are (the same rules and thresholds).
    std::unique_ptr<FindingsObserver> findings;
    std::unique_ptr<CostForecaster> cost;
    Aggregator whole;  // every sample since it was first served
    double first_t = 0;
    uint64_t rows = 0;
    bool finished = false;
    bool final_shown = false;  // its last row has been on a row
    // Its totals since it was first seen: GPU-seconds held and kept busy
    // (JobBusyRatio), and its working set's peak.
    double last_t = 0;
    double gpu_held_s = 0;
    double gpu_busy_s = 0;
    std::optional<double> memory_peak_bytes;
  };
  void Account(double t, const Sample& own, Watch* w) const;
  // The summary.json of the job `w`, which ended.
  static std::shared_ptr<const nlohmann::ordered_json> SummaryOf(const Watch& w);
  // `events` of the job `w`, tagged with its name, appended to `out`.
  static void Tag(const Watch& w, std::vector<Event>* events, std::vector<Event>* out);

  FleetOptions options_;
  std::vector<GpuInfo> gpus_;
  std::map<std::string, Watch> watches_;  // by kind and job
  std::vector<std::string> dropped_;      // keys not followed, while seen
  uint64_t dropped_total_ = 0;
};

}  // namespace tv

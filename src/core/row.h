// Row: one interval of samples reduced to mean, max, min and last value per metric.
// The unit that sinks write and views show. Plain data, copied across threads.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/gpu_sample.h"
#include "core/sample.h"

namespace tv {

struct Stat {
  double mean = 0;
  double max = 0;
  double last = 0;
  uint32_t count = 0;
  double min = 0;
};

// Accumulates values into a Stat. Not thread-safe.
class StatAccumulator {
 public:
  void Add(double v) { Add(v, v); }
  // Adds `v` to the mean and min, and `peak` (if higher) to the max.
  void Add(double v, double peak) {
    double top = peak > v ? peak : v;
    if (count_ == 0 || top > max_) max_ = top;
    if (count_ == 0 || v < min_) min_ = v;
    sum_ += v;
    last_ = v;
    ++count_;
  }
  std::optional<Stat> Get() const {
    if (count_ == 0) return std::nullopt;
    return Stat{sum_ / count_, max_, last_, count_, min_};
  }
  void Reset() { *this = StatAccumulator(); }

 private:
  double sum_ = 0;
  double max_ = 0;
  double min_ = 0;
  double last_ = 0;
  uint32_t count_ = 0;
};

struct GpuRow {
  int index = 0;
  int physical_index = 0;
  // GPU instance id of a MIG slice; -1 for the whole GPU.
  int mig_instance = -1;
  std::vector<std::optional<Stat>> values;  // parallel to GpuMetrics()
  // The GPU's compute processes as the interval's last sample listed them
  // (not reduced: a process list has no mean); empty when none or unknown.
  std::vector<GpuProcess> processes;
};

// Training state as the interval's last sample had it (markers); empty without.
struct TrainingRow {
  std::string phase;
  std::vector<std::pair<std::string, double>> scalars;
  std::vector<RankSteps> ranks;
};

struct JobRow;

struct Row {
  double t = 0;                             // unix seconds at the end of the interval
  double elapsed_s = 0;                     // since monitoring began
  uint32_t samples = 0;                     // samples reduced into this row
  std::vector<std::optional<Stat>> values;  // parallel to SampleMetrics()
  std::vector<double> core_util_ratio;      // mean per core
  std::vector<GpuRow> gpus;
  TrainingRow training;
  // Set by the analysis as the row closes (for Prometheus; not written to
  // samples.jsonl): the run's health score so far (0..100), and each finding
  // id opened so far, whether one is open now, with its worst severity.
  std::optional<double> health_score;
  struct Finding {
    std::string_view id;        // a static string of the findings table
    std::string_view severity;  // "info", "warning", "critical"
    bool active = false;
  };
  std::vector<Finding> findings;
  // The rules that apply but have not had the evidence to judge yet (static
  // strings of the findings table), and where the time went so far: seconds
  // by category (static names), and the productive share where step markers
  // measure it.
  std::vector<std::string_view> not_judged;
  std::vector<std::pair<std::string_view, double>> time_spent_s;
  std::optional<double> goodput_ratio;
  // Set by the cost accounting as the row closes (for Prometheus; not written
  // to samples.jsonl): the run so far over the GPUs the job used, by the code
  // that writes summary.json's "cost" (core/run_cost.h): how many, their mean
  // busy share, their energy since monitoring began, and the money at the
  // run's rates with its currency.
  std::optional<int> run_gpus_used;
  std::optional<double> run_gpu_busy_ratio;
  std::optional<double> run_gpu_energy_joules;
  std::optional<double> run_money;
  std::string run_currency;  // with run_money
  // Set by the alerts as the row closes (for Prometheus and the status line;
  // not written to samples.jsonl): each alert instance that has fired so far.
  struct Alert {
    std::string_view name;      // the rule's name; the rule set outlives every row
    std::string_view severity;  // "info", "warning", "critical"
    int gpu = -1;               // the GPU's index for a per-GPU rule; -1: none
    bool firing = false;
  };
  std::vector<Alert> alerts;
  // `serve`: the node's jobs as the row closes (run/fleet.h): those running
  // and those ended less than a set time ago, and the count of jobs left
  // unserved since the agent started because too many ran at once.
  std::vector<std::shared_ptr<const JobRow>> jobs;
  uint64_t jobs_dropped = 0;
};

// One job's row on a node (`serve`): its own figures over the interval (job
// scope values; its GPUs with the job's share of each) and its lifetime.
struct JobRow {
  std::shared_ptr<const JobIdentity> identity;
  double started_t = 0;
  std::optional<double> ended_t;  // absent while it runs
  // Per GPU of `row.gpus`: whether the job's environment names it.
  std::vector<bool> allocated;
  // Since it was first seen: GPU-seconds held and kept busy, and the peak of
  // its working set.
  double gpu_held_seconds = 0;
  double gpu_busy_seconds = 0;
  std::optional<double> memory_peak_bytes;
  // The training sessions in it, as the interval's last sample found them.
  std::vector<JobSession> sessions;
  Row row;
  // On the row the job ended: its summary.json (store/run_summary.h), as a
  // run's is (the whole job's figures, findings, health and cost).
  std::shared_ptr<const nlohmann::ordered_json> summary;
};

}  // namespace tv

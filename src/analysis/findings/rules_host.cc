// Rules on the host and the job's processes: cpu-bound, io-bound,
// host-memory-pressure, swapping.
#include <algorithm>

#include "analysis/findings/analyzer.h"
#include "analysis/findings/format.h"

namespace tv {

void Analyzer::JudgeHost(const Frame& f, std::vector<Event>* events) {
  bool alive = f.job_processes.value_or(1) > 0;
  // cpu-bound and io-bound (SageMaker's CPUBottleneck and IOBottleneck): a
  // GPU the job uses starves while the job's CPUs are saturated, or the CPUs
  // wait for storage, in most rows of the window.
  if (Judged(f) && Training(f)) {
    if (f.job_cpu_util_ratio) cpu_long_.Add(f.t, *f.job_cpu_util_ratio);
    std::optional<double> least_busy;  // of the GPUs the job uses; none: nothing to starve
    for (const GpuFrame& g : f.gpus) {
      if (!g.busy || g.job_memory_bytes.value_or(0) <= 0) continue;
      least_busy = least_busy ? std::min(*least_busy, *g.busy) : *g.busy;
    }
    if (least_busy) {
      bool cpu = *least_busy < th_[Th::kCpuBoundGpuRatio] &&
                 f.job_cpu_util_ratio.value_or(0) > th_[Th::kCpuBoundCpuRatio];
      bool io = *least_busy < th_[Th::kIoBoundGpuRatio] &&
                f.host_cpu_iowait_ratio.value_or(0) > th_[Th::kIoBoundIowaitRatio];
      cpu_bound_.Add(f.t, cpu ? 1 : 0);
      io_bound_.Add(f.t, io ? 1 : 0);
      Want(FindingId::kCpuBound);
      Want(FindingId::kIoBound);
      if (cpu_bound_.Full(interval_s_)) {
        Judging(FindingId::kCpuBound);
        Judging(FindingId::kIoBound);
      }
      double share = *cpu_bound_.Mean();
      if (Due(cpu_, f.t, cpu_bound_.Full(interval_s_) && share > th_[Th::kCpuBoundShare],
              th_[Th::kOpen_s], events)) {
        Opening o;
        o.evidence = {{"share_of_rows", Round4(share)},
                      {"job_cpu_util_ratio", Round4(f.job_cpu_util_ratio.value_or(0))},
                      {"gpu_busy_ratio", Round4(*least_busy)},
                      {"window_s", th_[Th::kWindow_s]}};
        o.message = fmt::format(
            "In {} of the last {} a GPU was under {} busy while the job used over {} of "
            "its CPUs: the CPU cannot keep the GPU fed.",
            Pct(share), Span(th_[Th::kWindow_s]), Pct(th_[Th::kCpuBoundGpuRatio]),
            Pct(th_[Th::kCpuBoundCpuRatio]));
        Open(FindingId::kCpuBound, cpu_, f.t, nlohmann::ordered_json::object(), std::move(o),
             events);
      }
      double io_share = *io_bound_.Mean();
      if (Due(io_, f.t, io_bound_.Full(interval_s_) && io_share > th_[Th::kCpuBoundShare],
              th_[Th::kOpen_s], events)) {
        Opening o;
        o.evidence = {{"share_of_rows", Round4(io_share)},
                      {"host_cpu_iowait_ratio", Round4(f.host_cpu_iowait_ratio.value_or(0))},
                      {"gpu_busy_ratio", Round4(*least_busy)},
                      {"window_s", th_[Th::kWindow_s]}};
        o.message = fmt::format(
            "In {} of the last {} a GPU was under {} busy while the CPUs waited for "
            "storage: reading the data holds the training back.",
            Pct(io_share), Span(th_[Th::kWindow_s]), Pct(th_[Th::kIoBoundGpuRatio]));
        Open(FindingId::kIoBound, io_, f.t, nlohmann::ordered_json::object(), std::move(o), events);
      }
    }
  }

  if (alive && f.job_memory_util_ratio) {
    double ratio = *f.job_memory_util_ratio;
    bool cond = ratio >= th_[Th::kHostMemoryRatio];
    if (Due(host_memory_, f.t, cond, th_[Th::kOpen_s], events)) {
      Opening o;
      o.severity =
          ratio >= th_[Th::kHostMemoryCriticalRatio] ? Severity::kCritical : Severity::kWarning;
      o.evidence = {{"job_memory_util_ratio", Round4(ratio)}};
      o.message = fmt::format(
          "The job uses {} of the memory it may use: the kernel kills it when that is full.",
          Pct(ratio));
      Open(FindingId::kHostMemoryPressure, host_memory_, f.t, nlohmann::ordered_json::object(),
           std::move(o), events);
    }
  }

  if (alive && f.host_swap_used_bytes) {
    double window = th_[Th::kWindow_s];
    swap_.emplace_back(f.t, *f.host_swap_used_bytes);
    while (swap_.size() > 1 && swap_[1].first <= f.t - window) swap_.pop_front();
    double span = swap_.back().first - swap_.front().first;
    bool full = span > 0 && span + interval_s_ >= 0.9 * window;
    double rate = full ? (swap_.back().second - swap_.front().second) / span : 0;
    if (Due(swapping_, f.t, full && rate > th_[Th::kSwapBytesPerSecond], th_[Th::kOpen_s],
            events)) {
      Opening o;
      o.evidence = {{"swap_growth_bytes_per_second", std::round(rate)}, {"window_s", window}};
      o.message = fmt::format("The host's swap grew by {:.0f} MiB/s over the last {}.",
                              rate / (1 << 20), Span(window));
      Open(FindingId::kSwapping, swapping_, f.t, nlohmann::ordered_json::object(), std::move(o),
           events);
    }
  }
}

}  // namespace tv

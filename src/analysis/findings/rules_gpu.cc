// Rules on each GPU the job uses: gpu-unused, gpu-idle, low-gpu-util,
// throttled, gpu-memory-near-full, shared-gpu, batch-too-small, and
// gpu-imbalance across them. A GPU counts as the job's when the job holds
// memory on it (gpus[].job_memory_bytes > 0).
#include <algorithm>

#include "analysis/findings/analyzer.h"
#include "analysis/findings/format.h"

namespace tv {
namespace {

nlohmann::ordered_json GpuSubject(int index) { return {{"gpu", index}}; }

}  // namespace

void Analyzer::JudgeGpus(const Frame& f, std::vector<Event>* events) {
  bool alive = f.job_processes.value_or(1) > 0;
  bool judged = Judged(f) && Training(f);
  for (const GpuFrame& gpu : f.gpus) {
    auto [it, added] = gpus_.try_emplace(gpu.index);
    GpuState& g = it->second;
    if (added) {
      g.busy.set_window(th_[Th::kWindow_s]);
      g.throttle.set_window(th_[Th::kWindow_s]);
      g.busy_long.set_window(th_[Th::kLowGpuUtilWindow_s]);
      g.memory_long.set_window(th_[Th::kLowGpuUtilWindow_s]);
    }
    bool used = alive && gpu.job_memory_bytes.value_or(0) > 0;
    JudgeGpuUse(g, gpu, f, events);
    if (!used) continue;
    nlohmann::ordered_json subject = GpuSubject(gpu.index);

    if (gpu.memory_total_bytes && *gpu.memory_total_bytes > 0) {
      // What the training needs: the allocator's figure where the framework
      // sends it (TensorFlow reserves nearly all memory up front), else the driver's.
      bool from_allocator = gpu.allocator_allocated_max_bytes.has_value();
      std::optional<double> used_bytes =
          from_allocator ? gpu.allocator_allocated_max_bytes : gpu.memory_used_max_bytes;
      if (used_bytes) {
        double ratio = *used_bytes / *gpu.memory_total_bytes;
        if (judged) g.memory_long.Add(f.t, ratio);
        if (Due(g.full, f.t, ratio >= th_[Th::kGpuMemoryFullRatio], th_[Th::kOpen_s], events)) {
          Opening o;
          o.evidence = {{"memory_used_bytes", *used_bytes},
                        {"memory_total_bytes", *gpu.memory_total_bytes},
                        {"ratio", Round4(ratio)},
                        {"from", from_allocator ? "allocator" : "driver"}};
          o.message = fmt::format("GPU {} memory is {} full: close to CUDA out of memory.",
                                  gpu.index, Pct(ratio));
          Open(FindingId::kGpuMemoryNearFull, g.full, f.t, subject, std::move(o), events);
        }
      }
    }

    bool shared = gpu.other_processes.value_or(0) >= 1;
    if (Due(g.shared, f.t, shared, th_[Th::kOpen_s], events)) {
      double share = gpu.memory_total_bytes && *gpu.memory_total_bytes > 0
                         ? gpu.other_memory_bytes.value_or(0) / *gpu.memory_total_bytes
                         : 0;
      Opening o;
      o.severity = share >= th_[Th::kSharedMemoryShare] ? Severity::kWarning : Severity::kInfo;
      o.evidence = {{"other_processes", *gpu.other_processes},
                    {"other_memory_bytes", gpu.other_memory_bytes.value_or(0)},
                    {"other_memory_share", Round4(share)}};
      o.message = fmt::format(
          "{:.0f} process{} outside the job use{} GPU {} ({} of its memory): they compete for "
          "its time and memory.",
          *gpu.other_processes, *gpu.other_processes == 1 ? "" : "es",
          *gpu.other_processes == 1 ? "s" : "", gpu.index, Pct(share));
      Open(FindingId::kSharedGpu, g.shared, f.t, subject, std::move(o), events);
    }

    if (gpu.busy && gpu.job_memory_bytes.value_or(0) > 0 && Training(f)) {
      Want(FindingId::kLowGpuUtil);
    }
    if (!judged || !gpu.busy) continue;
    double busy = *gpu.busy;
    g.busy.Add(f.t, busy);
    g.busy_long.Add(f.t, busy);

    double long_mean = *g.busy_long.Mean();
    bool long_full = g.busy_long.Full(interval_s_);
    if (long_full) Judging(FindingId::kLowGpuUtil);
    bool low =
        long_full && long_mean < th_[Th::kLowGpuUtilRatio] && long_mean >= th_[Th::kGpuIdleRatio];
    if (Due(g.low, f.t, low, 0, events)) {
      Opening o;
      o.severity = long_mean < th_[Th::kLowGpuUtilRedRatio] ? Severity::kWarning : Severity::kInfo;
      o.evidence = {{"busy_ratio", Round4(long_mean)}, {"window_s", th_[Th::kLowGpuUtilWindow_s]}};
      o.message = fmt::format("GPU {} was busy {} of the last {} of training.", gpu.index,
                              Pct(long_mean), Span(th_[Th::kLowGpuUtilWindow_s]));
      Open(FindingId::kLowGpuUtil, g.low, f.t, subject, std::move(o), events);
    }

    // batch-too-small (SageMaker's BatchSize rule): everything has room, and
    // neither the input nor the CPU explains it. The GPU must be in the band
    // over the last window too, for open_s (a GPU going idle passes through
    // the band on its way down), and not the odd one out among the job's GPUs
    // (the others' load shows the batch fills a GPU: gpu-imbalance).
    std::optional<double> wait = data_wait_.Mean();
    std::optional<double> cpu = cpu_long_.Mean();
    std::optional<double> memory = g.memory_long.Mean();
    double room = th_[Th::kBatchSmallRatio];
    double recent = *g.busy.Mean();
    bool steady = recent >= th_[Th::kLowGpuUtilRatio] && recent < room;
    bool uneven = g.imbalance.open() || g.imbalance.true_since.has_value();
    bool small = long_full && long_mean >= th_[Th::kLowGpuUtilRatio] && long_mean < room &&
                 steady && !uneven && memory && *memory < room && cpu && *cpu < room &&
                 (!wait || *wait < th_[Th::kInputBoundRatio]);
    if (Due(g.small, f.t, small, th_[Th::kOpen_s], events)) {
      Opening o;
      o.severity = Severity::kInfo;
      o.evidence = {{"busy_ratio", Round4(long_mean)},
                    {"memory_ratio", Round4(*memory)},
                    {"job_cpu_util_ratio", Round4(*cpu)},
                    {"window_s", th_[Th::kLowGpuUtilWindow_s]}};
      o.message = fmt::format(
          "GPU {} was busy {} with {} of its memory used, and the CPUs had room too: each step "
          "does too little work.",
          gpu.index, Pct(long_mean), Pct(*memory));
      Open(FindingId::kBatchTooSmall, g.small, f.t, subject, std::move(o), events);
    }

    if (gpu.throttle_any_ratio) g.throttle.Add(f.t, *gpu.throttle_any_ratio);
    std::optional<double> throttle = g.throttle.Mean();
    bool throttled = throttle && g.throttle.Full(interval_s_) &&
                     *throttle > th_[Th::kThrottleShare] && *g.busy.Mean() >= th_[Th::kBusyRatio];
    if (Due(g.throttled, f.t, throttled, th_[Th::kOpen_s], events)) {
      Opening o;
      o.evidence = {{"throttle_any_ratio", Round4(*throttle)},
                    {"busy_ratio", Round4(*g.busy.Mean())},
                    {"window_s", th_[Th::kWindow_s]}};
      o.message = fmt::format(
          "GPU {} had its clocks held down {} of the last {} while working (power cap, "
          "heat or hardware slowdown: see gpus[].throttle_*_ratio).",
          gpu.index, Pct(*throttle), Span(th_[Th::kWindow_s]));
      Open(FindingId::kThrottled, g.throttled, f.t, subject, std::move(o), events);
    }
  }
}

void Analyzer::JudgeGpuUse(GpuState& g, const GpuFrame& gpu, const Frame& f,
                           std::vector<Event>* events) {
  bool alive = f.job_processes.value_or(1) > 0;
  bool held = alive && gpu.job_memory_bytes.value_or(0) > 0;
  if (!held) {
    g.held_since.reset();
    g.idle_since.reset();
    Due(g.unused, f.t, false, 0, events);
    Due(g.idle, f.t, false, 0, events);
    return;
  }
  if (!g.held_since) g.held_since = f.t;
  if (!gpu.busy) return;
  bool busy = *gpu.busy >= th_[Th::kGpuIdleRatio];
  if (busy) {
    g.ever_busy = true;
    g.idle_since.reset();
  } else if (!Training(f)) {
    g.idle_since.reset();  // evaluation and checkpoints do not make a run idle
  } else if (!g.idle_since) {
    g.idle_since = f.t;
  }
  nlohmann::ordered_json subject = GpuSubject(gpu.index);
  double held_s = f.t - *g.held_since;
  if (g.ever_busy) Want(FindingId::kGpuIdle);
  if (g.ever_busy && Judged(f) && held_s >= th_[Th::kGpuIdle_s]) Judging(FindingId::kGpuIdle);
  if (Judged(f)) g.held_judged = GpuState::Held{*gpu.job_memory_bytes, *gpu.busy, held_s};
  if (Due(g.unused, f.t, !g.ever_busy && held_s >= th_[Th::kGpuUnused_s], 0, events)) {
    Opening o;
    o.evidence = {{"job_memory_bytes", *gpu.job_memory_bytes},
                  {"busy_ratio", *gpu.busy},
                  {"seconds_held", Round4(held_s)}};
    o.message = fmt::format("The job holds {:.0f} MiB on GPU {} but has not computed there in {}.",
                            *gpu.job_memory_bytes / (1 << 20), gpu.index, Span(held_s));
    Open(FindingId::kGpuUnused, g.unused, f.t, subject, std::move(o), events);
  }
  double idle_s = g.idle_since ? f.t - *g.idle_since : 0;
  if (Due(g.idle, f.t, g.ever_busy && idle_s >= th_[Th::kGpuIdle_s], 0, events)) {
    Opening o;
    o.evidence = {{"seconds_idle", Round4(idle_s)}, {"busy_ratio", *gpu.busy}};
    o.message =
        fmt::format("GPU {} has been idle for {} while the job holds it, outside evaluation.",
                    gpu.index, Span(idle_s));
    Open(FindingId::kGpuIdle, g.idle, f.t, subject, std::move(o), events);
  }
}

void Analyzer::FinishGpuUse(std::vector<Event>* events) {
  // gpu-unused "or the whole judged run": a run that ends before
  // gpu_unused_s, having held a GPU it never used through all of its judged
  // rows. Opened at the last row, live and replayed alike.
  for (auto& [index, g] : gpus_) {
    if (g.ever_busy || !g.held_judged || g.unused.open()) continue;
    bool said = std::any_of(records_.begin(), records_.end(), [index = index](const Record& r) {
      return r.id == FindingId::kGpuUnused && r.subject == GpuSubject(index);
    });
    if (said) continue;
    const GpuState::Held& h = *g.held_judged;
    Opening o;
    o.evidence = {{"job_memory_bytes", h.job_memory_bytes},
                  {"busy_ratio", h.busy_ratio},
                  {"seconds_held", Round4(h.seconds)}};
    o.message = fmt::format(
        "The job held {:.0f} MiB on GPU {} and never computed there in the {} it held it.",
        h.job_memory_bytes / (1 << 20), index, Span(h.seconds));
    Open(FindingId::kGpuUnused, g.unused, last_t_, GpuSubject(index), std::move(o), events);
  }
}

void Analyzer::JudgeBalance(const Frame& f, std::vector<Event>* events) {
  if (!Judged(f) || !Training(f)) return;
  double top = 0;
  int used = 0;
  for (const GpuFrame& gpu : f.gpus) {
    auto it = gpus_.find(gpu.index);
    if (it == gpus_.end() || gpu.job_memory_bytes.value_or(0) <= 0) continue;
    if (!it->second.busy.Full(interval_s_)) return;
    top = std::max(top, *it->second.busy.Mean());
    ++used;
  }
  if (used < 2) return;
  for (const GpuFrame& gpu : f.gpus) {
    if (gpu.job_memory_bytes.value_or(0) <= 0) continue;
    GpuState& g = gpus_[gpu.index];
    double mean = *g.busy.Mean();
    bool cond = top >= th_[Th::kBusyRatio] && mean < th_[Th::kImbalanceScore] * top &&
                top - mean >= th_[Th::kImbalanceGap];
    if (!Due(g.imbalance, f.t, cond, th_[Th::kOpen_s], events)) continue;
    Opening o;
    o.evidence = {{"busy_ratio", Round4(mean)},
                  {"busiest_ratio", Round4(top)},
                  {"window_s", th_[Th::kWindow_s]}};
    o.message =
        fmt::format("GPU {} was busy {} of the last {} while the busiest GPU of the job was at {}.",
                    gpu.index, Pct(mean), Span(th_[Th::kWindow_s]), Pct(top));
    Open(FindingId::kGpuImbalance, g.imbalance, f.t, GpuSubject(gpu.index), std::move(o), events);
  }
}

}  // namespace tv

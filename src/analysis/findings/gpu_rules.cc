// The rules on each GPU the job uses (gpu_rules.h).
#include "analysis/findings/gpu_rules.h"

#include <algorithm>

#include "analysis/findings/format.h"

namespace tv {
void GpuRules::OnFrame(const Frame& f, RuleContext& cx) {
  bool alive = f.job_processes.value_or(1) > 0;
  bool judged = cx.run.Judged(f) && cx.run.Training(f);
  for (const GpuFrame& gpu : f.gpus) {
    auto [it, added] = gpus_.try_emplace(gpu.index);
    GpuState& g = it->second;
    if (added) {
      g.busy.set_window(cx.th[Th::kWindow_s]);
      g.throttle.set_window(cx.th[Th::kWindow_s]);
      g.busy_long.set_window(cx.th[Th::kLowGpuUtilWindow_s]);
      g.memory_long.set_window(cx.th[Th::kLowGpuUtilWindow_s]);
    }
    bool used = alive && gpu.job_memory_bytes.value_or(0) > 0;
    JudgeUse(g, gpu, f, cx);
    if (!used) continue;
    FindingSubject subject = FindingSubject::Gpu(gpu.index);

    if (gpu.memory_total_bytes && *gpu.memory_total_bytes > 0) {
      // What the training needs: the allocator's figure where the framework
      // sends it (TensorFlow reserves nearly all memory up front), else the driver's.
      bool from_allocator = gpu.allocator_allocated_max_bytes.has_value();
      std::optional<double> used_bytes =
          from_allocator ? gpu.allocator_allocated_max_bytes : gpu.memory_used_max_bytes;
      if (used_bytes) {
        double ratio = *used_bytes / *gpu.memory_total_bytes;
        if (judged) g.memory_long.Add(f.t, ratio);
        if (cx.Due(g.full, f.t, ratio >= cx.th[Th::kGpuMemoryFullRatio], cx.th[Th::kOpen_s])) {
          Opening o;
          o.evidence = {{"memory_used_bytes", *used_bytes},
                        {"memory_total_bytes", *gpu.memory_total_bytes},
                        {"ratio", Round4(ratio)},
                        {"from", from_allocator ? "allocator" : "driver"}};
          o.message = fmt::format("GPU {} memory is {} full: close to CUDA out of memory.",
                                  gpu.index, Pct(ratio));
          cx.Open(FindingId::kGpuMemoryNearFull, g.full, f.t, subject, std::move(o));
        }
      }
    }

    bool shared = gpu.other_processes.value_or(0) >= 1;
    if (cx.Due(g.shared, f.t, shared, cx.th[Th::kOpen_s])) {
      double share = gpu.memory_total_bytes && *gpu.memory_total_bytes > 0
                         ? gpu.other_memory_bytes.value_or(0) / *gpu.memory_total_bytes
                         : 0;
      Opening o;
      o.severity = share >= cx.th[Th::kSharedMemoryShare] ? Severity::kWarning : Severity::kInfo;
      o.evidence = {{"other_processes", *gpu.other_processes},
                    {"other_memory_bytes", gpu.other_memory_bytes.value_or(0)},
                    {"other_memory_share", Round4(share)}};
      o.message = fmt::format(
          "{:.0f} process{} outside the job use{} GPU {} ({} of its memory): they compete for "
          "its time and memory.",
          *gpu.other_processes, *gpu.other_processes == 1 ? "" : "es",
          *gpu.other_processes == 1 ? "s" : "", gpu.index, Pct(share));
      cx.Open(FindingId::kSharedGpu, g.shared, f.t, subject, std::move(o));
    }

    if (gpu.busy && gpu.job_memory_bytes.value_or(0) > 0 && cx.run.Training(f)) {
      cx.Want(FindingId::kLowGpuUtil);
    }
    if (!judged || !gpu.busy) continue;
    double busy = *gpu.busy;
    g.busy.Add(f.t, busy);
    g.busy_long.Add(f.t, busy);

    double long_mean = *g.busy_long.Mean();
    bool long_full = g.busy_long.Full(cx.run.interval_s);
    if (long_full) cx.Judging(FindingId::kLowGpuUtil);
    bool low = long_full && long_mean < cx.th[Th::kLowGpuUtilRatio] &&
               long_mean >= cx.th[Th::kGpuIdleRatio];
    if (cx.Due(g.low, f.t, low, 0)) {
      Opening o;
      o.severity =
          long_mean < cx.th[Th::kLowGpuUtilRedRatio] ? Severity::kWarning : Severity::kInfo;
      o.evidence = {{"busy_ratio", Round4(long_mean)},
                    {"window_s", cx.th[Th::kLowGpuUtilWindow_s]}};
      o.message = fmt::format("GPU {} was busy {} of the last {} of training.", gpu.index,
                              Pct(long_mean), Span(cx.th[Th::kLowGpuUtilWindow_s]));
      cx.Open(FindingId::kLowGpuUtil, g.low, f.t, subject, std::move(o));
    }

    // batch-too-small (SageMaker's BatchSize rule): everything has room, and
    // neither the input nor the CPU explains it. The GPU must be in the band
    // over the last window too, for open_s (a GPU going idle passes through
    // the band on its way down), and not the odd one out among the job's GPUs
    // (the others' load shows the batch fills a GPU: gpu-imbalance).
    std::optional<double> wait = input_.WaitMean();
    std::optional<double> cpu = cpu_.CpuMean();
    std::optional<double> memory = g.memory_long.Mean();
    double room = cx.th[Th::kBatchSmallRatio];
    double recent = *g.busy.Mean();
    bool steady = recent >= cx.th[Th::kLowGpuUtilRatio] && recent < room;
    bool uneven = g.imbalance.open() || g.imbalance.true_since.has_value();
    bool small = long_full && long_mean >= cx.th[Th::kLowGpuUtilRatio] && long_mean < room &&
                 steady && !uneven && memory && *memory < room && cpu && *cpu < room &&
                 (!wait || *wait < cx.th[Th::kInputBoundRatio]);
    if (cx.Due(g.small, f.t, small, cx.th[Th::kOpen_s])) {
      Opening o;
      o.severity = Severity::kInfo;
      o.evidence = {{"busy_ratio", Round4(long_mean)},
                    {"memory_ratio", Round4(*memory)},
                    {"job_cpu_util_ratio", Round4(*cpu)},
                    {"window_s", cx.th[Th::kLowGpuUtilWindow_s]}};
      o.message = fmt::format(
          "GPU {} was busy {} with {} of its memory used, and the CPUs had room too: each step "
          "does too little work.",
          gpu.index, Pct(long_mean), Pct(*memory));
      cx.Open(FindingId::kBatchTooSmall, g.small, f.t, subject, std::move(o));
    }

    if (gpu.throttle_any_ratio) g.throttle.Add(f.t, *gpu.throttle_any_ratio);
    std::optional<double> throttle = g.throttle.Mean();
    bool throttled = throttle && g.throttle.Full(cx.run.interval_s) &&
                     *throttle > cx.th[Th::kThrottleShare] &&
                     *g.busy.Mean() >= cx.th[Th::kBusyRatio];
    if (cx.Due(g.throttled, f.t, throttled, cx.th[Th::kOpen_s])) {
      Opening o;
      o.evidence = {{"throttle_any_ratio", Round4(*throttle)},
                    {"busy_ratio", Round4(*g.busy.Mean())},
                    {"window_s", cx.th[Th::kWindow_s]}};
      o.message = fmt::format(
          "GPU {} had its clocks held down {} of the last {} while working (power cap, "
          "heat or hardware slowdown: see gpus[].throttle_*_ratio).",
          gpu.index, Pct(*throttle), Span(cx.th[Th::kWindow_s]));
      cx.Open(FindingId::kThrottled, g.throttled, f.t, subject, std::move(o));
    }
  }
  JudgeBalance(f, cx);
}

void GpuRules::JudgeUse(GpuState& g, const GpuFrame& gpu, const Frame& f, RuleContext& cx) {
  bool alive = f.job_processes.value_or(1) > 0;
  bool held = alive && gpu.job_memory_bytes.value_or(0) > 0;
  if (!held) {
    g.held_since.reset();
    g.idle_since.reset();
    cx.Due(g.unused, f.t, false, 0);
    cx.Due(g.idle, f.t, false, 0);
    return;
  }
  if (!g.held_since) g.held_since = f.t;
  if (!gpu.busy) return;
  bool busy = *gpu.busy >= cx.th[Th::kGpuIdleRatio];
  if (busy) {
    g.ever_busy = true;
    g.idle_since.reset();
  } else if (!cx.run.Training(f)) {
    g.idle_since.reset();  // evaluation and checkpoints do not make a run idle
  } else if (!g.idle_since) {
    g.idle_since = f.t;
  }
  FindingSubject subject = FindingSubject::Gpu(gpu.index);
  double held_s = f.t - *g.held_since;
  if (g.ever_busy) cx.Want(FindingId::kGpuIdle);
  if (g.ever_busy && cx.run.Judged(f) && held_s >= cx.th[Th::kGpuIdle_s])
    cx.Judging(FindingId::kGpuIdle);
  if (cx.run.Judged(f)) g.held_judged = GpuState::Held{*gpu.job_memory_bytes, *gpu.busy, held_s};
  if (cx.Due(g.unused, f.t, !g.ever_busy && held_s >= cx.th[Th::kGpuUnused_s], 0)) {
    Opening o;
    o.evidence = {{"job_memory_bytes", *gpu.job_memory_bytes},
                  {"busy_ratio", *gpu.busy},
                  {"seconds_held", Round4(held_s)}};
    o.message = fmt::format("The job holds {:.0f} MiB on GPU {} but has not computed there in {}.",
                            *gpu.job_memory_bytes / (1 << 20), gpu.index, Span(held_s));
    cx.Open(FindingId::kGpuUnused, g.unused, f.t, subject, std::move(o));
  }
  double idle_s = g.idle_since ? f.t - *g.idle_since : 0;
  if (cx.Due(g.idle, f.t, g.ever_busy && idle_s >= cx.th[Th::kGpuIdle_s], 0)) {
    Opening o;
    o.evidence = {{"seconds_idle", Round4(idle_s)}, {"busy_ratio", *gpu.busy}};
    o.message =
        fmt::format("GPU {} has been idle for {} while the job holds it, outside evaluation.",
                    gpu.index, Span(idle_s));
    cx.Open(FindingId::kGpuIdle, g.idle, f.t, subject, std::move(o));
  }
}

void GpuRules::Finish(RuleContext& cx) {
  // gpu-unused "or the whole judged run": a run that ends before
  // gpu_unused_s, having held a GPU it never used through all of its judged
  // rows. Opened at the last row, live and replayed alike.
  for (auto& [index, g] : gpus_) {
    if (g.ever_busy || !g.held_judged || g.unused.open()) continue;
    const std::vector<LoggedFinding>& records = cx.log().records();
    bool said =
        std::any_of(records.begin(), records.end(), [index = index](const LoggedFinding& r) {
          return r.id == FindingId::kGpuUnused && r.record.subject == FindingSubject::Gpu(index);
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
    cx.Open(FindingId::kGpuUnused, g.unused, cx.run.last_t, FindingSubject::Gpu(index),
            std::move(o));
  }
}

void GpuRules::JudgeBalance(const Frame& f, RuleContext& cx) {
  if (!cx.run.Judged(f) || !cx.run.Training(f)) return;
  double top = 0;
  int used = 0;
  for (const GpuFrame& gpu : f.gpus) {
    auto it = gpus_.find(gpu.index);
    if (it == gpus_.end() || gpu.job_memory_bytes.value_or(0) <= 0) continue;
    if (!it->second.busy.Full(cx.run.interval_s)) return;
    top = std::max(top, *it->second.busy.Mean());
    ++used;
  }
  if (used < 2) return;
  for (const GpuFrame& gpu : f.gpus) {
    if (gpu.job_memory_bytes.value_or(0) <= 0) continue;
    GpuState& g = gpus_[gpu.index];
    double mean = *g.busy.Mean();
    bool cond = top >= cx.th[Th::kBusyRatio] && mean < cx.th[Th::kImbalanceScore] * top &&
                top - mean >= cx.th[Th::kImbalanceGap];
    if (!cx.Due(g.imbalance, f.t, cond, cx.th[Th::kOpen_s])) continue;
    Opening o;
    o.evidence = {{"busy_ratio", Round4(mean)},
                  {"busiest_ratio", Round4(top)},
                  {"window_s", cx.th[Th::kWindow_s]}};
    o.message =
        fmt::format("GPU {} was busy {} of the last {} while the busiest GPU of the job was at {}.",
                    gpu.index, Pct(mean), Span(cx.th[Th::kWindow_s]), Pct(top));
    cx.Open(FindingId::kGpuImbalance, g.imbalance, f.t, FindingSubject::Gpu(gpu.index),
            std::move(o));
  }
}

}  // namespace tv

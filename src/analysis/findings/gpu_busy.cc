// low-gpu-util, batch-too-small and gpu-imbalance (gpu_busy.h).
#include "analysis/findings/gpu_busy.h"

#include <algorithm>

#include "analysis/findings/format.h"

namespace tv {

void GpuBusyRules::OnFrame(const Frame& f, RuleContext& cx) {
  bool judged = cx.run.Judged(f) && cx.run.Training(f);
  for (const GpuFrame& gpu : f.gpus) {
    auto [it, added] = gpus_.try_emplace(gpu.index);
    GpuState& g = it->second;
    if (added) {
      g.busy.set_window(cx.th[Th::kWindow_s]);
      g.busy_long.set_window(cx.th[Th::kLowGpuUtilWindow_s]);
      g.memory_long.set_window(cx.th[Th::kLowGpuUtilWindow_s]);
    }
    if (!JobHolds(f, gpu)) continue;
    bool from_allocator = false;
    std::optional<double> needed = NeededMemoryBytes(gpu, &from_allocator);
    if (judged && needed) g.memory_long.Add(f.t, *needed / *gpu.memory_total_bytes);
    if (gpu.busy && cx.run.Training(f)) cx.Want(FindingId::kLowGpuUtil);
    if (judged && gpu.busy) JudgeBusy(g, gpu, f, cx);
  }
  JudgeBalance(f, cx);
}

void GpuBusyRules::JudgeBusy(GpuState& g, const GpuFrame& gpu, const Frame& f, RuleContext& cx) {
  FindingSubject subject = FindingSubject::Gpu(gpu.index);
  double busy = *gpu.busy;
  g.busy.Add(f.t, busy);
  g.busy_long.Add(f.t, busy);

  double long_mean = *g.busy_long.Mean();
  bool long_full = g.busy_long.Full(cx.run.interval_s);
  if (long_full) cx.Judging(FindingId::kLowGpuUtil);
  bool low =
      long_full && long_mean < cx.th[Th::kLowGpuUtilRatio] && long_mean >= cx.th[Th::kGpuIdleRatio];
  if (cx.Due(g.low, f.t, low, 0)) {
    Opening o;
    o.severity = long_mean < cx.th[Th::kLowGpuUtilRedRatio] ? Severity::kWarning : Severity::kInfo;
    o.evidence = {{"busy_ratio", Round4(long_mean)}, {"window_s", cx.th[Th::kLowGpuUtilWindow_s]}};
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
}

void GpuBusyRules::JudgeBalance(const Frame& f, RuleContext& cx) {
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
        fmt::format("{} was busy {} of the last {} while the busiest GPU of the job was at {}.",
                    GpuWords(gpu), Pct(mean), Span(cx.th[Th::kWindow_s]), Pct(top));
    cx.Open(FindingId::kGpuImbalance, g.imbalance, f.t, FindingSubject::Gpu(gpu.index),
            std::move(o));
  }
}

}  // namespace tv

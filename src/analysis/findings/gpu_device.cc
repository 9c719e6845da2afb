// The rules on one GPU's own figures (gpu_device.h).
#include "analysis/findings/gpu_device.h"

#include "analysis/findings/format.h"

namespace tv {

void GpuMemoryFullRule::OnFrame(const Frame& f, RuleContext& cx) {
  for (const GpuFrame& gpu : f.gpus) {
    if (!JobHolds(f, gpu)) continue;
    bool from_allocator = false;
    std::optional<double> needed = NeededMemoryBytes(gpu, &from_allocator);
    if (!needed) continue;
    double ratio = *needed / *gpu.memory_total_bytes;
    Tracker& full = full_[gpu.index];
    if (!cx.Due(full, f.t, ratio >= cx.th[Th::kGpuMemoryFullRatio], cx.th[Th::kOpen_s])) {
      continue;
    }
    Opening o;
    o.evidence = {{"memory_used_bytes", *needed},
                  {"memory_total_bytes", *gpu.memory_total_bytes},
                  {"ratio", Round4(ratio)},
                  {"from", from_allocator ? "allocator" : "driver"}};
    o.message = fmt::format("GPU {} memory is {} full: close to CUDA out of memory.", gpu.index,
                            Pct(ratio));
    cx.Open(FindingId::kGpuMemoryNearFull, full, f.t, FindingSubject::Gpu(gpu.index), std::move(o));
  }
}

void SharedGpuRule::OnFrame(const Frame& f, RuleContext& cx) {
  for (const GpuFrame& gpu : f.gpus) {
    if (!JobHolds(f, gpu)) continue;
    Tracker& shared = shared_[gpu.index];
    if (!cx.Due(shared, f.t, gpu.other_processes.value_or(0) >= 1, cx.th[Th::kOpen_s])) continue;
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
    cx.Open(FindingId::kSharedGpu, shared, f.t, FindingSubject::Gpu(gpu.index), std::move(o));
  }
}

void ThrottledRule::OnFrame(const Frame& f, RuleContext& cx) {
  bool judged = cx.run.Judged(f) && cx.run.Training(f);
  for (const GpuFrame& gpu : f.gpus) {
    auto [it, added] = gpus_.try_emplace(gpu.index);
    GpuState& g = it->second;
    if (added) g.throttle.set_window(cx.th[Th::kWindow_s]);
    if (!JobHolds(f, gpu) || !judged || !gpu.busy) continue;
    if (gpu.throttle_any_ratio) g.throttle.Add(f.t, *gpu.throttle_any_ratio);
    std::optional<double> throttle = g.throttle.Mean();
    std::optional<double> busy = busy_.BusyMean(gpu.index);
    bool throttled = throttle && busy && g.throttle.Full(cx.run.interval_s) &&
                     *throttle > cx.th[Th::kThrottleShare] && *busy >= cx.th[Th::kBusyRatio];
    if (!cx.Due(g.throttled, f.t, throttled, cx.th[Th::kOpen_s])) continue;
    Opening o;
    o.evidence = {{"throttle_any_ratio", Round4(*throttle)},
                  {"busy_ratio", Round4(*busy)},
                  {"window_s", cx.th[Th::kWindow_s]}};
    o.message = fmt::format(
        "GPU {} had its clocks held down {} of the last {} while working (power cap, "
        "heat or hardware slowdown: see gpus[].throttle_*_ratio).",
        gpu.index, Pct(*throttle), Span(cx.th[Th::kWindow_s]));
    cx.Open(FindingId::kThrottled, g.throttled, f.t, FindingSubject::Gpu(gpu.index), std::move(o));
  }
}

}  // namespace tv

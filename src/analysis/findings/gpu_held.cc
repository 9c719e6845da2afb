// gpu-unused and gpu-idle (gpu_held.h).
#include "analysis/findings/gpu_held.h"

#include <algorithm>

#include "analysis/findings/format.h"

namespace tv {

void GpuHeldRule::OnFrame(const Frame& f, RuleContext& cx) {
  for (const GpuFrame& gpu : f.gpus) Judge(gpus_[gpu.index], gpu, f, cx);
}

void GpuHeldRule::Judge(GpuState& g, const GpuFrame& gpu, const Frame& f, RuleContext& cx) {
  if (!JobHolds(f, gpu)) {
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
  if (cx.run.Judged(f)) g.held_judged = Held{*gpu.job_memory_bytes, *gpu.busy, held_s};
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

void GpuHeldRule::Finish(RuleContext& cx) {
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
    const Held& h = *g.held_judged;
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

}  // namespace tv

// cpu-bound and io-bound (cpu_io_bound.h).
#include "analysis/findings/cpu_io_bound.h"

#include <algorithm>

#include "analysis/findings/format.h"

namespace tv {

void CpuIoBoundRule::OnFrame(const Frame& f, RuleContext& cx) {
  if (!cx.run.Judged(f) || !cx.run.Training(f)) return;
  if (f.job_cpu_util_ratio) cpu_long_.Add(f.t, *f.job_cpu_util_ratio);
  std::optional<double> least_busy;  // of the GPUs the job uses; none: nothing to starve
  for (const GpuFrame& g : f.gpus) {
    if (!g.busy || g.job_memory_bytes.value_or(0) <= 0) continue;
    least_busy = least_busy ? std::min(*least_busy, *g.busy) : *g.busy;
  }
  if (least_busy) {
    bool cpu = *least_busy < cx.th[Th::kCpuBoundGpuRatio] &&
               f.job_cpu_util_ratio.value_or(0) > cx.th[Th::kCpuBoundCpuRatio];
    bool io = *least_busy < cx.th[Th::kIoBoundGpuRatio] &&
              f.host_cpu_iowait_ratio.value_or(0) > cx.th[Th::kIoBoundIowaitRatio];
    cpu_bound_.Add(f.t, cpu ? 1 : 0);
    io_bound_.Add(f.t, io ? 1 : 0);
    cx.Want(FindingId::kCpuBound);
    cx.Want(FindingId::kIoBound);
    if (cpu_bound_.Full(cx.run.interval_s)) {
      cx.Judging(FindingId::kCpuBound);
      cx.Judging(FindingId::kIoBound);
    }
    double share = *cpu_bound_.Mean();
    if (cx.Due(cpu_, f.t, cpu_bound_.Full(cx.run.interval_s) && share > cx.th[Th::kCpuBoundShare],
               cx.th[Th::kOpen_s])) {
      Opening o;
      o.evidence = {{"share_of_rows", Round4(share)},
                    {"job_cpu_util_ratio", Round4(f.job_cpu_util_ratio.value_or(0))},
                    {"gpu_busy_ratio", Round4(*least_busy)},
                    {"window_s", cx.th[Th::kWindow_s]}};
      // The kernel's own word, where the job has a cgroup with PSI: its tasks
      // waited for a CPU this share of the time.
      if (f.job_cpu_pressure_ratio) {
        o.evidence["job_cpu_pressure_ratio"] = Round4(*f.job_cpu_pressure_ratio);
      }
      o.message = fmt::format(
          "In {} of the last {} a GPU was under {} busy while the job used over {} of "
          "its CPUs{}: the CPU cannot keep the GPU fed.",
          Pct(share), Span(cx.th[Th::kWindow_s]), Pct(cx.th[Th::kCpuBoundGpuRatio]),
          Pct(cx.th[Th::kCpuBoundCpuRatio]),
          f.job_cpu_pressure_ratio ? fmt::format(" and its tasks waited for a CPU {} of the time",
                                                 Pct(*f.job_cpu_pressure_ratio))
                                   : "");
      cx.Open(FindingId::kCpuBound, cpu_, f.t, FindingSubject::Job(), std::move(o));
    }
    double io_share = *io_bound_.Mean();
    if (cx.Due(io_, f.t, io_bound_.Full(cx.run.interval_s) && io_share > cx.th[Th::kCpuBoundShare],
               cx.th[Th::kOpen_s])) {
      Opening o;
      o.evidence = {{"share_of_rows", Round4(io_share)},
                    {"host_cpu_iowait_ratio", Round4(f.host_cpu_iowait_ratio.value_or(0))},
                    {"gpu_busy_ratio", Round4(*least_busy)},
                    {"window_s", cx.th[Th::kWindow_s]}};
      if (f.job_io_pressure_ratio) {
        o.evidence["job_io_pressure_ratio"] = Round4(*f.job_io_pressure_ratio);
      }
      o.message = fmt::format(
          "In {} of the last {} a GPU was under {} busy while the CPUs waited for "
          "storage{}: reading the data holds the training back.",
          Pct(io_share), Span(cx.th[Th::kWindow_s]), Pct(cx.th[Th::kIoBoundGpuRatio]),
          f.job_io_pressure_ratio
              ? fmt::format(" (the job's tasks {} of the time)", Pct(*f.job_io_pressure_ratio))
              : "");
      cx.Open(FindingId::kIoBound, io_, f.t, FindingSubject::Job(), std::move(o));
    }
  }
}

}  // namespace tv

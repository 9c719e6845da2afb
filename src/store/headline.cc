#include "store/headline.h"

#include <cmath>
#include <limits>

#include "core/metrics.h"

namespace tv {
namespace {

std::optional<double> Finite(std::optional<double> v) {
  return v && std::isfinite(*v) ? v : std::nullopt;
}

}  // namespace

RunHeadline HeadlineOf(const RunSummary& summary) {
  return HeadlineOf(summary, summary.cost ? &*summary.cost : nullptr);
}

RunHeadline HeadlineOf(const RunSummary& summary, const CostRecord* cost) {
  RunHeadline h;
  if (cost != nullptr) {
    h.gpu_busy_ratio = Finite(cost->busy_ratio);
    h.busy_basis = cost->busy_basis;
    // A file's number, cast only when it fits.
    if (auto n = cost->gpus_used; n && *n >= 0 && *n <= std::numeric_limits<int>::max()) {
      h.gpus_used = static_cast<int>(*n);
    }
    h.gpu_energy_kwh = Finite(cost->gpu_energy_kwh);
    h.energy_kwh = Finite(cost->energy_kwh);
    h.money = Finite(cost->money);
    if (h.money) h.currency = cost->currency;
  }
  std::vector<GpuUse> gpus = GpuUsesOf(summary.totals);
  std::vector<bool> used = JobUsedGpus(gpus);
  std::vector<const GpuUse*> used_gpus;
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (used[i]) used_gpus.push_back(&gpus[i]);
  }
  h.gpu_util_ratio = BusyShareOn(used_gpus, BusyBasis::kUtil);
  if (summary.health) {
    h.health_score = Finite(summary.health->score);
    if (!h.health_score) h.health_note = summary.health->note;
  }
  return h;
}

std::vector<GpuUse> GpuUsesOf(const RunTotals& totals) {
  std::vector<GpuUse> out;
  for (const GpuTotals& g : totals.gpus) {
    GpuUse& u = out.emplace_back();
    u.index = g.index;
    u.processes_listed = g.Has(metric::kGpuJobProcesses);
    u.job_processes_max = g.Max(metric::kGpuJobProcesses).value_or(0);
    u.job_memory_bytes_max = g.Max(metric::kGpuJobMemoryBytes).value_or(0);
    u.util_ratio_mean = g.Value(metric::kGpuUtilRatio);
    u.sm_active_ratio_mean = g.Value(metric::kGpuSmActiveRatio);
    u.energy_joules = g.Value(metric::kGpuEnergyJoules);
  }
  return out;
}

}  // namespace tv

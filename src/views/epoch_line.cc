#include "views/epoch_line.h"

#include <fmt/format.h>

#include "core/format.h"

namespace tv {
namespace {

std::string GpuLoads(const SpanResources& r) {
  std::string out;
  for (const SpanGpu& g : r.gpus) {
    if (g.util_ratio_mean)
      out += fmt::format(", GPU{} {}", g.index, FormatPercent(*g.util_ratio_mean));
  }
  return out;
}

}  // namespace

std::string FormatEpochLine(const EpochRecord& e) {
  std::string out = fmt::format("trainvitals: epoch {}", e.epoch);
  if (!e.complete) out += " (not ended)";
  out += fmt::format(": {}", FormatDuration(e.duration_s));
  out += fmt::format(", {} steps", e.steps);
  if (e.steps_per_second) out += fmt::format(" ({:.1f}/s)", *e.steps_per_second);
  for (const char* key : {"loss", "val_loss"}) {
    if (auto v = Logged(e, key)) out += fmt::format(", {} {:.4g}", key, *v);
  }
  const SpanResources& r = e.resources;
  if (r.data_wait_ratio) out += ", data wait " + FormatPercent(*r.data_wait_ratio);
  if (r.cpu_cores_mean) out += fmt::format(" | CPU {:.1f} cores", *r.cpu_cores_mean);
  if (r.memory_bytes_max) out += fmt::format(" | RAM peak {}", FormatBytes(*r.memory_bytes_max));
  for (const SpanGpu& g : r.gpus) {
    out += fmt::format(" | GPU{}", g.index);
    if (g.util_ratio_mean) out += " " + FormatPercent(*g.util_ratio_mean);
    if (g.job_sm_util_ratio_mean)
      out += " (job SM " + FormatPercent(*g.job_sm_util_ratio_mean) + ")";
    if (g.memory_used_bytes_max) out += " mem " + FormatBytes(*g.memory_used_bytes_max);
    const auto& job = g.job_memory_bytes_max;
    const auto& others = g.other_memory_bytes_max;
    if (job && others && *others > 0) {
      out += " (job " + FormatBytes(*job) + ", others " + FormatBytes(*others) + ")";
    } else if (job) {
      out += " (job " + FormatBytes(*job) + ")";
    }
    if (g.allocator_peak_bytes) out += " alloc peak " + FormatBytes(*g.allocator_peak_bytes);
    if (g.temperature_celsius_max) out += fmt::format(" {:.0f}°C", *g.temperature_celsius_max);
    if (g.energy_joules) out += fmt::format(" {:.0f} J", *g.energy_joules);
  }
  if (r.cpu_energy_joules) out += fmt::format(" | CPU {:.0f} J", *r.cpu_energy_joules);
  return out;
}

std::string FormatEpochLine(const nlohmann::ordered_json& epoch) {
  EpochRecord e;
  if (Status s = EpochFromJson(epoch, &e); !s.ok()) {
    return "trainvitals: an epoch record of the wrong shape (" + s.message() + ")";
  }
  return FormatEpochLine(e);
}

std::string FormatPhases(const PhaseRecords& phases) {
  std::string out;
  for (const auto& [name, p] : phases) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", name, FormatDuration(p.duration_s));
    std::string inner;
    if (p.share) inner = FormatPercent(*p.share);
    if (auto wait = p.resources.data_wait_ratio)
      inner += (inner.empty() ? "data wait " : ", data wait ") + FormatPercent(*wait);
    std::string loads = GpuLoads(p.resources);
    if (!loads.empty()) inner += inner.empty() ? loads.substr(2) : loads;
    if (!inner.empty()) out += " (" + inner + ")";
  }
  return out;
}

}  // namespace tv

#include "views/status_line.h"

#include <fmt/format.h>
#include <unistd.h>

#include "core/metrics.h"
#include "views/epoch_line.h"
#include "views/format.h"

namespace tv {

std::string StatusText(const Row& row) {
  auto sample = SampleMetrics();
  std::string out = fmt::format("trainvitals {}", FormatDuration(row.elapsed_s));
  if (auto cpu = FindStat(sample, row.values, Scope::kJob, "cpu_cores")) {
    out += fmt::format(" | CPU {:.1f} cores", cpu->mean);
  }
  if (auto mem = FindStat(sample, row.values, Scope::kJob, "memory_bytes")) {
    out += fmt::format(" | RAM {}", FormatBytes(mem->last));
  }
  auto used = FindStat(sample, row.values, Scope::kHost, "memory_used_bytes");
  auto total = FindStat(sample, row.values, Scope::kHost, "memory_limit_bytes");
  if (used && total) {
    out += fmt::format(" (host {}/{})", FormatBytes(used->last), FormatBytes(total->last));
  }
  auto gpu_defs = GpuMetrics();
  for (const GpuRow& g : row.gpus) {
    out += g.mig_instance >= 0 ? fmt::format(" | GPU{}/MIG{}", g.index, g.mig_instance)
                               : fmt::format(" | GPU{}", g.index);
    if (auto u = FindStat(gpu_defs, g.values, Scope::kGpu, "util_ratio")) {
      out += " " + FormatPercent(u->mean);
    }
    if (auto m = FindStat(gpu_defs, g.values, Scope::kGpu, "memory_used_bytes")) {
      out += " " + FormatBytes(m->last);
      if (auto t = FindStat(gpu_defs, g.values, Scope::kGpu, "memory_total_bytes")) {
        out += "/" + FormatBytes(t->last);
      }
    }
    if (auto j = FindStat(gpu_defs, g.values, Scope::kGpu, "job_memory_bytes")) {
      out += " (job " + FormatBytes(j->last) + ")";
    }
    if (auto t = FindStat(gpu_defs, g.values, Scope::kGpu, "temperature_celsius")) {
      out += fmt::format(" {:.0f}°C", t->max);
    }
  }
  return out;
}

void StatusLine::OnRow(const Row& row) {
  if (!live_) return;
  std::string line = "\r\033[K" + StatusText(row);
  shown_ = ::write(fd_, line.data(), line.size()) > 0;
}

void StatusLine::OnEvent(const Event& event) {
  std::string line;
  if (event.type == "source_unavailable") {
    line = fmt::format("trainvitals: {}\n", event.fields.value("message", ""));
  } else if (event.type == "marker_malformed") {
    line = fmt::format("trainvitals: ignored a malformed marker: {}\n",
                       event.fields.value("message", ""));
  } else if (event.type == "epoch") {
    line = FormatEpochLine(event.fields) + "\n";
  } else {
    return;
  }
  Clear();
  (void)!::write(fd_, line.data(), line.size());
}

void StatusLine::OnClose() { Clear(); }

void StatusLine::Clear() {
  if (!shown_) return;
  const char clear[] = "\r\033[K";
  (void)!::write(fd_, clear, sizeof(clear) - 1);
  shown_ = false;
}

}  // namespace tv

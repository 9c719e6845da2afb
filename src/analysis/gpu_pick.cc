#include "analysis/gpu_pick.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tv {
namespace {

std::string Label(const GpuCandidate& c) {
  if (c.mig_instance >= 0)
    return fmt::format("GPU {} MIG {} ({})", c.index, c.mig_instance, c.uuid);
  return fmt::format("GPU {}", c.index);
}

std::string GiB(double bytes) { return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024 * 1024)); }

}  // namespace

PickResult PickGpus(std::vector<GpuCandidate> candidates, const PickRules& rules) {
  PickResult out;
  std::vector<GpuCandidate> ok;
  for (GpuCandidate& c : candidates) {
    // A slice or GPU the driver gives no busy share for is idle when no
    // process computes on it (MIG slices report no utilisation).
    if (!c.busy_ratio && c.processes == 0) c.busy_ratio = 0;
    if (c.held_by) {
      out.rejected.push_back(Label(c) + ": " + *c.held_by);
    } else if (c.mig_instance >= 0 && rules.count > 1) {
      out.rejected.push_back(Label(c) + ": a CUDA process sees one MIG slice at most");
    } else if (!c.memory_free_bytes) {
      out.rejected.push_back(Label(c) + ": its free memory could not be read");
    } else if (*c.memory_free_bytes < rules.min_free_bytes) {
      out.rejected.push_back(fmt::format("{}: {} free, under {}", Label(c),
                                         GiB(*c.memory_free_bytes), GiB(rules.min_free_bytes)));
    } else if (c.busy_ratio && *c.busy_ratio > rules.max_busy_ratio) {
      out.rejected.push_back(fmt::format("{}: {:.0f} % busy, over {:.0f} %", Label(c),
                                         *c.busy_ratio * 100, rules.max_busy_ratio * 100));
    } else if (!c.busy_ratio && rules.max_busy_ratio < 1) {
      out.rejected.push_back(Label(c) + ": how busy it is could not be read");
    } else {
      ok.push_back(std::move(c));
    }
  }
  // Free is both: the share of memory free times the share of time idle, so
  // an idle GPU whose memory someone holds is not the freest.
  auto score = [](const GpuCandidate& c) {
    double total = c.memory_total_bytes.value_or(0);
    double free_share = total > 0 ? *c.memory_free_bytes / total : 0;
    return std::round(free_share * (1 - c.busy_ratio.value_or(0)) * 100);
  };
  std::stable_sort(ok.begin(), ok.end(), [&](const GpuCandidate& a, const GpuCandidate& b) {
    if (score(a) != score(b)) return score(a) > score(b);
    return *a.memory_free_bytes > *b.memory_free_bytes;
  });
  if (static_cast<int>(ok.size()) > rules.count) {
    for (size_t i = rules.count; i < ok.size(); ++i) {
      out.rejected.push_back(Label(ok[i]) + ": qualifies, but others are freer");
    }
    ok.resize(rules.count);
  }
  out.chosen = std::move(ok);
  return out;
}

std::string VisibleDevices(const std::vector<GpuCandidate>& chosen) {
  std::string out;
  for (const GpuCandidate& c : chosen) {
    if (!out.empty()) out += ",";
    out += c.mig_instance >= 0 ? c.uuid : std::to_string(c.index);
  }
  return out;
}

}  // namespace tv

// JobEnd, out-of-memory errors and the memory trail (oom.h).
#include "analysis/findings/oom.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "analysis/findings/format.h"

namespace tv {
namespace {

bool ContainsNoCase(std::string_view text, std::string_view word) {
  auto it = std::search(text.begin(), text.end(), word.begin(), word.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
  return it != text.end();
}

}  // namespace

bool IsOutOfMemoryError(std::string_view type, std::string_view message) {
  // "torch.OutOfMemoryError", "tensorflow.python.framework.errors_impl.ResourceExhaustedError".
  if (size_t dot = type.rfind('.'); dot != std::string_view::npos) type.remove_prefix(dot + 1);
  for (std::string_view name : {"OutOfMemoryError", "ResourceExhaustedError", "MemoryError"}) {
    if (type == name) return true;
  }
  return ContainsNoCase(message, "out of memory");
}

void MemoryTrail::Add(const Frame& f) {
  Point p;
  if (!points_.empty() && points_.front().t <= f.t - kTrail_s) {
    p = std::move(points_.front());  // reuses its GPU vector
    points_.pop_front();
  }
  p.t = f.t;
  p.alive = f.job_processes.value_or(1) > 0;
  p.job_memory_bytes = f.job_memory_bytes;
  p.limit_bytes = f.host_memory_limit_bytes;
  p.available_bytes = f.host_memory_available_bytes;
  p.cgroup_bytes = f.host_cgroup_memory_current_bytes;
  p.gpus.resize(f.gpus.size());
  for (size_t i = 0; i < f.gpus.size(); ++i) {
    const GpuFrame& g = f.gpus[i];
    p.gpus[i] = Gpu{g.index, g.job_memory_bytes, g.memory_used_bytes, g.memory_total_bytes};
  }
  points_.push_back(std::move(p));
  // The newest stays whatever its time: at a time so large that subtracting
  // the trail changes nothing, every point would be older than the trail.
  while (points_.size() > 1 && points_.front().t <= f.t - kTrail_s) points_.pop_front();
}

double MemoryTrail::Covered_s(double row_s) const {
  return points_.empty() ? 0 : points_.back().t - points_.front().t + row_s;
}

nlohmann::ordered_json MemoryTrail::Points() const {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  size_t n = points_.size();
  size_t shown = std::min(n, kPoints);
  // Evenly over the trail: the oldest first, the newest last; the job's peak
  // takes the place of the point nearest it, so the evidence shows it.
  std::vector<size_t> picked;
  for (size_t k = 0; k < shown; ++k) {
    picked.push_back(shown == 1 ? n - 1 : (k * (n - 1) + (shown - 1) / 2) / (shown - 1));
  }
  auto peak = std::max_element(points_.begin(), points_.end(), [](const Point& a, const Point& b) {
    return a.job_memory_bytes.value_or(0) < b.job_memory_bytes.value_or(0);
  });
  if (peak != points_.end() && peak->job_memory_bytes) {
    auto at = static_cast<size_t>(peak - points_.begin());
    auto nearest = std::min_element(picked.begin(), picked.end(), [at](size_t a, size_t b) {
      return (a > at ? a - at : at - a) < (b > at ? b - at : at - b);
    });
    if (nearest == picked.end() - 1 && picked.size() > 1 && at != picked.back()) --nearest;
    *nearest = at;
  }
  for (size_t i : picked) {
    const Point& p = points_[i];
    nlohmann::ordered_json j = {{"t", p.t}};
    PutIfSet(&j, "job_memory_bytes", p.job_memory_bytes);
    PutIfSet(&j, "memory_limit_bytes", p.limit_bytes);
    PutIfSet(&j, "memory_available_bytes", p.available_bytes);
    PutIfSet(&j, "cgroup_memory_current_bytes", p.cgroup_bytes);
    if (!p.gpus.empty()) {
      nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
      for (const Gpu& g : p.gpus) {
        nlohmann::ordered_json gj = {{"index", g.index}};
        PutIfSet(&gj, "job_memory_bytes", g.job_memory_bytes);
        PutIfSet(&gj, "memory_used_bytes", g.memory_used_bytes);
        PutIfSet(&gj, "memory_total_bytes", g.memory_total_bytes);
        gpus.push_back(std::move(gj));
      }
      j["gpus"] = std::move(gpus);
    }
    out.push_back(std::move(j));
  }
  return out;
}

std::optional<MemoryTrail::AtLimit> MemoryTrail::Closest(double window_s) const {
  auto last =
      std::find_if(points_.rbegin(), points_.rend(), [](const Point& p) { return p.alive; });
  if (last == points_.rend()) return std::nullopt;
  std::optional<AtLimit> best;
  for (auto it = last; it != points_.rend() && it->t >= last->t - window_s; ++it) {
    if (!it->alive || !it->limit_bytes || *it->limit_bytes <= 0) continue;
    double limit = *it->limit_bytes;
    double used = std::max(it->job_memory_bytes.value_or(0), it->cgroup_bytes.value_or(0));
    // The host had next to nothing left (the OOM killer outside any cgroup).
    if (it->available_bytes) used = std::max(used, limit - *it->available_bytes);
    double ratio = used / limit;
    if (!best || ratio > best->ratio) best = AtLimit{ratio, limit, used};
  }
  return best;
}

std::optional<double> MemoryTrail::LimitBytes() const {
  for (auto it = points_.rbegin(); it != points_.rend(); ++it) {
    if (it->limit_bytes) return it->limit_bytes;
  }
  return std::nullopt;
}

std::optional<double> MemoryTrail::JobPeakBytes() const {
  std::optional<double> peak;
  for (const Point& p : points_) {
    if (p.job_memory_bytes) peak = std::max(peak.value_or(0), *p.job_memory_bytes);
  }
  return peak;
}

}  // namespace tv

#include "markers/risk.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/format.h"

namespace tv {
namespace {

constexpr int kReadTries = 16;

// 45 s, 12 min, 3 h 10 min, 2 d 4 h.
std::string Duration(double seconds) {
  double s = std::max(0.0, std::round(seconds));
  if (s < 60) return fmt::format("{:.0f} s", s);
  double minutes = std::round(s / 60);
  if (minutes < 60) return fmt::format("{:.0f} min", minutes);
  double hours = std::floor(minutes / 60);
  if (hours < 24) return fmt::format("{:.0f} h {:.0f} min", hours, minutes - hours * 60);
  double days = std::floor(hours / 24);
  return fmt::format("{:.0f} d {:.0f} h", days, hours - days * 24);
}

int32_t ToInt32(std::optional<int64_t> v) {
  if (!v || *v < 0 || *v > std::numeric_limits<int32_t>::max()) return -1;
  return static_cast<int32_t>(*v);
}

}  // namespace

std::string_view RiskKindId(MemoryRisk::Kind kind) {
  switch (kind) {
    case MemoryRisk::Kind::kOomForecast:
      return "oom-forecast";
    case MemoryRisk::Kind::kGpuMemoryLeak:
      return "gpu-memory-leak";
    case MemoryRisk::Kind::kHostMemoryLeak:
      return "host-memory-leak";
    case MemoryRisk::Kind::kAlertStop:
      return "alert-stop";
  }
  return "memory-risk";
}

void WriteRisk(const MemoryRisk& risk, uint32_t seq, RiskRecord* record) {
  uint32_t lock = record->lock.load(std::memory_order_relaxed);
  record->lock.store(lock + 1, std::memory_order_relaxed);  // odd: being written
  std::atomic_thread_fence(std::memory_order_release);
  record->seq.store(seq, std::memory_order_relaxed);
  record->kind.store(static_cast<uint16_t>(risk.kind), std::memory_order_relaxed);
  int gpu = risk.gpu >= 0 && risk.gpu <= std::numeric_limits<int16_t>::max() ? risk.gpu : -1;
  record->gpu.store(static_cast<int16_t>(gpu), std::memory_order_relaxed);
  record->epoch.store(ToInt32(risk.epoch), std::memory_order_relaxed);
  record->planned_epochs.store(ToInt32(risk.planned_epochs), std::memory_order_relaxed);
  double left = risk.seconds_left && std::isfinite(*risk.seconds_left)
                    ? *risk.seconds_left
                    : std::numeric_limits<double>::quiet_NaN();
  record->seconds_left.store(left, std::memory_order_relaxed);
  double growth = std::isfinite(risk.growth_bytes_per_second) ? risk.growth_bytes_per_second : 0;
  record->growth_bytes_per_second.store(growth, std::memory_order_relaxed);
  record->lock.store(lock + 2, std::memory_order_release);
}

std::optional<MemoryRisk> ReadRisk(const RiskRecord& record, uint32_t* seq) {
  for (int i = 0; i < kReadTries; ++i) {
    uint32_t before = record.lock.load(std::memory_order_acquire);
    if (before & 1) continue;
    uint32_t number = record.seq.load(std::memory_order_relaxed);
    uint16_t kind = record.kind.load(std::memory_order_relaxed);
    int16_t gpu = record.gpu.load(std::memory_order_relaxed);
    int32_t epoch = record.epoch.load(std::memory_order_relaxed);
    int32_t planned = record.planned_epochs.load(std::memory_order_relaxed);
    double left = record.seconds_left.load(std::memory_order_relaxed);
    double growth = record.growth_bytes_per_second.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (record.lock.load(std::memory_order_relaxed) != before) continue;
    if (number == 0 || kind < 1 || kind > 4) return std::nullopt;
    MemoryRisk risk;
    risk.kind = static_cast<MemoryRisk::Kind>(kind);
    risk.gpu = gpu >= 0 ? gpu : -1;
    if (epoch >= 0) risk.epoch = epoch;
    if (planned >= 0) risk.planned_epochs = planned;
    if (std::isfinite(left)) risk.seconds_left = left;
    risk.growth_bytes_per_second = std::isfinite(growth) ? growth : 0;
    *seq = number;
    return risk;
  }
  return std::nullopt;
}

std::string DescribeRisk(const MemoryRisk& risk, std::optional<double> seconds_per_epoch) {
  if (risk.kind == MemoryRisk::Kind::kAlertStop) return "an alert asks the training to stop";
  std::string out = risk.gpu >= 0 ? fmt::format("GPU {} memory", risk.gpu) : "host memory";
  double growth = risk.growth_bytes_per_second;
  if (seconds_per_epoch && *seconds_per_epoch > 0) {
    out += fmt::format(" grows {}/epoch", FormatBytes(growth * *seconds_per_epoch));
  } else {
    out += fmt::format(" grows {}/min", FormatBytes(growth * 60));
  }
  if (risk.epoch) {
    out += fmt::format(": it runs out at epoch {}", *risk.epoch);
    if (risk.planned_epochs) out += fmt::format(" of {}", *risk.planned_epochs);
    if (risk.seconds_left) out += ", in about " + Duration(*risk.seconds_left);
  } else if (risk.seconds_left) {
    out += ": it runs out in about " + Duration(*risk.seconds_left);
  }
  return out;
}

}  // namespace tv

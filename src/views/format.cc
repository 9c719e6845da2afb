#include "views/format.h"

#include <fmt/format.h>

#include <cmath>

namespace tv {

std::string FormatBytes(double bytes) {
  constexpr double kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024;
  if (bytes >= kTiB) return fmt::format("{:.2f} TiB", bytes / kTiB);
  if (bytes >= 10 * kGiB) return fmt::format("{:.1f} GiB", bytes / kGiB);
  if (bytes >= kGiB) return fmt::format("{:.2f} GiB", bytes / kGiB);
  if (bytes >= kMiB) return fmt::format("{:.0f} MiB", bytes / kMiB);
  if (bytes >= kKiB) return fmt::format("{:.0f} KiB", bytes / kKiB);
  return fmt::format("{:.0f} B", bytes);
}

std::string FormatPercent(double ratio) { return fmt::format("{:.0f}%", ratio * 100); }

std::string FormatDuration(double seconds) {
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  auto total = static_cast<long>(std::lround(seconds));
  long h = total / 3600, m = (total / 60) % 60, s = total % 60;
  if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, s);
  return fmt::format("{}:{:02}", m, s);
}

}  // namespace tv

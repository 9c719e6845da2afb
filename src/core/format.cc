#include "core/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
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

std::string ShellQuote(std::string_view arg) {
  auto plain = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
  };
  if (!arg.empty() && std::all_of(arg.begin(), arg.end(), plain)) return std::string(arg);
  if (arg.find('\'') != std::string_view::npos &&
      arg.find_first_of("\"$`\\!") == std::string_view::npos) {
    return "\"" + std::string(arg) + "\"";
  }
  std::string out = "'";
  for (char c : arg) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string ShellCommand(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(a);
  }
  return out;
}

}  // namespace tv

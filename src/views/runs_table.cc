#include "views/runs_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "core/format.h"

namespace tv {
namespace {

constexpr size_t kNameWidth = 24;

std::string Or(const std::optional<double>& v, std::string (*format)(double)) {
  return v ? format(*v) : "-";
}

// Three significant digits at most, no exponent: 0.123, 1.23, 12.3, 1234;
// "<0.001" for what is more than nothing but less than that.
std::string Amount(double v) {
  double a = std::abs(v);
  if (a > 0 && a < 0.0005) return "<0.001";
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1 || a == 0) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3f}", v);
}

std::string LocalTime(double t) {
  std::time_t secs = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M", &tm);
  return text;
}

std::string Clip(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  return s.substr(0, width - 1) + "~";
}

std::string Exit(const RunRecord& r) {
  if (r.signal) return fmt::format("sig {}", *r.signal);
  if (r.exit_code) return fmt::format("{}", *r.exit_code);
  return "-";
}

}  // namespace

std::string FormatRunsTable(const std::vector<RunRecord>& runs) {
  size_t name_width = 4;
  for (const RunRecord& r : runs) name_width = std::max(name_width, r.name.size());
  name_width = std::min(name_width, kNameWidth);
  constexpr const char* kLine =
      "{:<16}  {:<{}}  {:>8}  {:>4}  {:>4}  {:>6}  {:>6}  {:>7}  {:>6}  {}\n";
  std::string out = fmt::format(fmt::runtime(kLine), "START", "NAME", name_width, "DURATION",
                                "GPUS", "BUSY", "GPU-H", "WASTED", "KWH", "HEALTH", "EXIT");
  for (const RunRecord& r : runs) {
    std::string exit = Exit(r);
    if (r.missing) exit += " (missing)";
    out += fmt::format(
        fmt::runtime(kLine), r.start_t ? LocalTime(*r.start_t) : "-", Clip(r.name, name_width),
        name_width, Or(r.duration_s, FormatDuration), r.gpu_count, Or(r.busy_ratio, FormatPercent),
        Or(r.gpu_hours, Amount), Or(r.wasted_gpu_hours, Amount), Or(r.energy_kwh, Amount),
        r.health_score ? fmt::format("{:.0f}", *r.health_score) : std::string("-"), exit);
  }
  return out;
}

std::string FormatRunStats(const RunStats& s) {
  std::string out = fmt::format("trainvitals: {} run{}\n", s.runs, s.runs == 1 ? "" : "s");
  if (s.runs == 0) return out;
  out += fmt::format("  Duration  total {}", FormatDuration(s.duration_s_total));
  if (s.duration_s_mean) out += fmt::format(", mean {}", FormatDuration(*s.duration_s_mean));
  out += "\n";
  if (s.gpu_hours) {
    out += fmt::format("  GPU       {} GPU-h held, {} busy ({})", Amount(*s.gpu_hours),
                       Amount(*s.busy_gpu_hours), Or(s.busy_ratio, FormatPercent));
    if (s.wasted_gpu_hours) out += fmt::format(", {} wasted", Amount(*s.wasted_gpu_hours));
    out += "\n";
    out += fmt::format("  Low use   {} run{} busy under {}, holding {} GPU-h\n", s.low_busy_runs,
                       s.low_busy_runs == 1 ? "" : "s", FormatPercent(RunStats::kLowBusyRatio),
                       Amount(s.low_busy_gpu_hours));
  }
  if (s.energy_kwh) {
    out += fmt::format("  Energy    {} kWh", Amount(*s.energy_kwh));
    if (s.co2e_kg) out += fmt::format(", {} kg CO2e (grid average)", Amount(*s.co2e_kg));
    out += "\n";
  }
  for (const auto& [currency, amount] : s.money) {
    out += fmt::format("  Money     {:.2f} {}\n", amount, currency);
  }
  if (!s.top_wasters.empty()) {
    out += "  Wasters   (GPU-hours held but idle, the most first)\n";
    for (const RunRecord* r : s.top_wasters) {
      out += fmt::format("    {:>7} GPU-h  busy {:>4}  {}  {}\n", Amount(*r->wasted_gpu_hours),
                         Or(r->busy_ratio, FormatPercent), r->name, r->run_dir);
    }
  }
  if (!s.findings.empty()) {
    out += "  Findings  (runs with each)\n";
    for (const auto& f : s.findings) out += fmt::format("    {:>7}  {}\n", f.runs, f.id);
  }
  return out;
}

std::string FormatGroupStats(std::string_view key, const std::vector<RunGroupStats>& groups) {
  int64_t runs = 0;
  size_t width = std::string_view("(unknown)").size();
  for (const RunGroupStats& g : groups) {
    runs += g.stats.runs;
    width = std::max(width, g.group.size());
  }
  std::string out = fmt::format("trainvitals: {} run{} by {}\n", runs, runs == 1 ? "" : "s", key);
  if (groups.empty()) return out;
  out += fmt::format("  {:<{}}  {:>5}  {:>9}  {:>5}  {:>9}  {:>9}  {:>9}  {}\n", key, width, "runs",
                     "GPU-h", "busy", "wasted", "low busy", "kWh", "finding (runs)");
  for (const RunGroupStats& g : groups) {
    const RunStats& s = g.stats;
    auto amount = [](const std::optional<double>& v) { return v ? Amount(*v) : std::string("-"); };
    std::string finding = "-";
    if (!s.findings.empty()) {
      finding = fmt::format("{} ({})", s.findings.front().id, s.findings.front().runs);
    }
    out += fmt::format("  {:<{}}  {:>5}  {:>9}  {:>5}  {:>9}  {:>9}  {:>9}  {}\n",
                       g.group.empty() ? "(unknown)" : g.group, width, s.runs, amount(s.gpu_hours),
                       Or(s.busy_ratio, FormatPercent), amount(s.wasted_gpu_hours), s.low_busy_runs,
                       amount(s.energy_kwh), finding);
  }
  return out;
}

}  // namespace tv

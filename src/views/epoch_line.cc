#include "views/epoch_line.h"

#include <fmt/format.h>

#include "core/format.h"

namespace tv {
namespace {

std::optional<double> Num(const nlohmann::ordered_json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string GpuLoads(const nlohmann::ordered_json& j) {
  std::string out;
  for (const auto& g : j.value("gpus", nlohmann::ordered_json::array())) {
    if (auto u = Num(g, "util_ratio_mean"))
      out += fmt::format(", GPU{} {}", g.value("index", 0), FormatPercent(*u));
  }
  return out;
}

}  // namespace

std::string FormatEpochLine(const nlohmann::ordered_json& e) {
  std::string out = fmt::format("trainvitals: epoch {}", e.value("epoch", 0));
  if (e.value("complete", true) == false) out += " (not ended)";
  out += fmt::format(": {}", FormatDuration(e.value("duration_s", 0.0)));
  if (auto steps = Num(e, "steps")) {
    out += fmt::format(", {:.0f} steps", *steps);
    if (auto rate = Num(e, "steps_per_second")) out += fmt::format(" ({:.1f}/s)", *rate);
  }
  const auto& logs = e.value("logs", nlohmann::ordered_json::object());
  for (const char* key : {"loss", "val_loss"}) {
    if (auto v = Num(logs, key)) out += fmt::format(", {} {:.4g}", key, *v);
  }
  if (auto wait = Num(e, "data_wait_ratio")) out += ", data wait " + FormatPercent(*wait);
  if (auto cpu = Num(e, "cpu_cores_mean")) out += fmt::format(" | CPU {:.1f} cores", *cpu);
  if (auto mem = Num(e, "memory_bytes_max"))
    out += fmt::format(" | RAM peak {}", FormatBytes(*mem));
  for (const auto& g : e.value("gpus", nlohmann::ordered_json::array())) {
    out += fmt::format(" | GPU{}", g.value("index", 0));
    if (auto u = Num(g, "util_ratio_mean")) out += " " + FormatPercent(*u);
    if (auto u = Num(g, "job_sm_util_ratio_mean")) out += " (job SM " + FormatPercent(*u) + ")";
    if (auto m = Num(g, "memory_used_bytes_max")) out += " mem " + FormatBytes(*m);
    auto job = Num(g, "job_memory_bytes_max");
    auto others = Num(g, "other_memory_bytes_max");
    if (job && others && *others > 0) {
      out += " (job " + FormatBytes(*job) + ", others " + FormatBytes(*others) + ")";
    } else if (job) {
      out += " (job " + FormatBytes(*job) + ")";
    }
    if (auto m = Num(g, "allocator_peak_bytes")) out += " alloc peak " + FormatBytes(*m);
    if (auto t = Num(g, "temperature_celsius_max")) out += fmt::format(" {:.0f}°C", *t);
    if (auto j = Num(g, "energy_joules")) out += fmt::format(" {:.0f} J", *j);
  }
  if (auto j = Num(e, "cpu_energy_joules")) out += fmt::format(" | CPU {:.0f} J", *j);
  return out;
}

std::string FormatPhases(const nlohmann::ordered_json& phases) {
  std::string out;
  for (const auto& [name, p] : phases.items()) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", name, FormatDuration(p.value("duration_s", 0.0)));
    std::string inner;
    if (auto share = Num(p, "share")) inner = FormatPercent(*share);
    if (auto wait = Num(p, "data_wait_ratio"))
      inner += (inner.empty() ? "data wait " : ", data wait ") + FormatPercent(*wait);
    std::string loads = GpuLoads(p);
    if (!loads.empty()) inner += inner.empty() ? loads.substr(2) : loads;
    if (!inner.empty()) out += " (" + inner + ")";
  }
  return out;
}

}  // namespace tv

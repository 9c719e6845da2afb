#include "views/cost_lines.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/format.h"

namespace tv {
namespace {

using Json = nlohmann::ordered_json;

std::optional<double> Number(const Json& j, std::string_view key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// ", 4.1 kWh, 1.9 kg CO2e (estimate), 12.40 USD" of whichever `j` holds.
std::string Figures(const Json& j, const std::string& currency) {
  std::string out;
  if (auto kwh = Number(j, "energy_kwh")) out += ", " + FormatKwh(*kwh);
  if (auto kg = Number(j, "co2e_kg")) out += ", " + FormatKg(*kg) + " CO2e";
  if (auto money = Number(j, "money")) out += ", " + FormatMoney(*money, currency);
  return out;
}

}  // namespace

std::string FormatGpuHours(double hours) {
  if (hours < 1.0 / 60) return fmt::format("{:.1f} GPU-s", hours * 3600);
  if (hours < 1) return fmt::format("{:.1f} GPU-min", hours * 60);
  return fmt::format("{:.2f} GPU-h", hours);
}

std::string FormatKwh(double kwh) {
  if (kwh < 0.001) return fmt::format("{:.2f} Wh", kwh * 1000);
  if (kwh < 1) return fmt::format("{:.1f} Wh", kwh * 1000);
  return fmt::format("{:.2f} kWh", kwh);
}

std::string FormatKg(double kg) {
  if (kg < 0.001) return fmt::format("{:.2f} g", kg * 1000);
  if (kg < 1) return fmt::format("{:.1f} g", kg * 1000);
  return fmt::format("{:.2f} kg", kg);
}

std::string FormatMoney(double amount, const std::string& currency) {
  if (amount > 0 && amount < 0.01) return fmt::format("{:.4f} {}", amount, currency);
  return fmt::format("{:.2f} {}", amount, currency);
}

std::string FormatCost(const Json& cost) {
  if (!cost.is_object()) return "";
  std::string currency = cost.value("currency", std::string());
  std::string out;
  auto gpus = Number(cost, "gpus_used").value_or(0);
  if (gpus > 0) {
    out += fmt::format("  Cost     {:.0f} GPU{} held {}", gpus, gpus == 1 ? "" : "s",
                       FormatGpuHours(Number(cost, "gpu_hours").value_or(0)));
    if (auto busy = Number(cost, "busy_gpu_hours")) {
      out += fmt::format(", busy {} ({}", FormatGpuHours(*busy),
                         FormatPercent(Number(cost, "busy_ratio").value_or(0)));
      out +=
          cost.value("busy_basis", std::string()) == "sm_active_ratio" ? " by SM activity)" : ")";
    }
    const Json lost = cost.value("lost", Json::object());
    std::string parts;
    for (auto [key, what] :
         {std::pair{"startup_ratio", "start-up"}, std::pair{"data_wait_ratio", "waiting for input"},
          std::pair{"evaluation_ratio", "in evaluation"},
          std::pair{"checkpoint_ratio", "checkpoints"}, std::pair{"stalled_ratio", "stalled"},
          std::pair{"idle_gpu_ratio", "held idle"}}) {
      if (auto r = Number(lost, key); r && *r >= 0.005) {
        parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", FormatPercent(*r), what);
      }
    }
    if (!parts.empty()) out += "; of the held time " + parts;
    out += "\n";
  }
  if (auto kwh = Number(cost, "energy_kwh")) {
    out += fmt::format("  Cost     {}", FormatKwh(*kwh));
    std::string parts;
    if (auto g = Number(cost, "gpu_energy_kwh")) parts += "GPUs " + FormatKwh(*g);
    if (auto c = Number(cost, "cpu_energy_kwh")) {
      parts += (parts.empty() ? "" : ", ") + ("CPU " + FormatKwh(*c));
    }
    if (auto pue = Number(cost, "pue"); pue && *pue != 1) {
      parts += fmt::format("{}x PUE {:g}", parts.empty() ? "" : ", ", *pue);
    }
    if (!parts.empty()) out += " (" + parts + ")";
    if (auto kg = Number(cost, "co2e_kg")) {
      out += fmt::format(", {} CO2e (estimate at {:g} g/kWh)", FormatKg(*kg),
                         Number(cost, "grid_g_per_kwh").value_or(0));
    }
    out += "\n";
  }
  if (auto money = Number(cost, "money")) {
    out += "  Cost     " + FormatMoney(*money, currency);
    std::string parts;
    if (auto g = Number(cost, "money_gpu_hours")) parts += "GPU-hours " + FormatMoney(*g, currency);
    if (auto e = Number(cost, "money_energy")) {
      parts += (parts.empty() ? "" : ", ") + ("energy " + FormatMoney(*e, currency));
    }
    if (!parts.empty()) out += " (" + parts + ")";
    out += "\n";
  }
  if (auto unpriced = cost.find("unpriced_models");
      unpriced != cost.end() && unpriced->is_array() && !unpriced->empty()) {
    std::vector<std::string> models;
    for (const Json& m : *unpriced) models.push_back(m.is_string() ? m.get<std::string>() : "?");
    out += fmt::format("  Cost     no GPU-hour price for {} ([cost] gpu_hour_price)\n",
                       fmt::join(models, ", "));
  }
  if (auto f = cost.find("forecast"); f != cost.end() && f->is_object()) {
    out += fmt::format("  Forecast all {} epochs would have taken {}{} (stopped after {})\n",
                       f->value("planned_epochs", 0),
                       FormatDuration(Number(*f, "duration_s").value_or(0)), Figures(*f, currency),
                       f->value("epochs_done", 0));
  }
  return out;
}

std::string FormatForecastLine(const Json& forecast, const std::string& currency) {
  return fmt::format("trainvitals: forecast for all {} epochs (after {}): {} in all{}",
                     forecast.value("planned_epochs", 0), forecast.value("epochs_done", 0),
                     FormatDuration(Number(forecast, "duration_s").value_or(0)),
                     Figures(forecast, currency));
}

}  // namespace tv

#include "views/cost_lines.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/format.h"

namespace tv {
namespace {

// ", 4.1 kWh, 1.9 kg CO2e (estimate), 12.40 USD" of whichever `f` holds.
std::string Figures(const CostForecast& f, const std::string& currency) {
  std::string out;
  if (f.energy_kwh) out += ", " + FormatKwh(*f.energy_kwh);
  if (f.co2e_kg) out += ", " + FormatKg(*f.co2e_kg) + " CO2e";
  if (f.money) out += ", " + FormatMoney(*f.money, currency);
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

std::string FormatCost(const CostRecord& cost) {
  const std::string& currency = cost.currency;
  std::string out;
  auto gpus = cost.gpus_used.value_or(0);
  if (gpus > 0) {
    out += fmt::format("  Cost     {} GPU{} held {}", gpus, gpus == 1 ? "" : "s",
                       FormatGpuHours(cost.gpu_hours.value_or(0)));
    if (cost.busy_gpu_hours) {
      out += fmt::format(", busy {} ({}", FormatGpuHours(*cost.busy_gpu_hours),
                         FormatPercent(cost.busy_ratio.value_or(0)));
      out += cost.busy_basis == "sm_active_ratio" ? " by SM activity)" : ")";
    }
    const CostLost lost = cost.lost.value_or(CostLost{});
    std::string parts;
    for (auto [r, what] :
         {std::pair{lost.startup_ratio, "start-up"},
          std::pair{lost.data_wait_ratio, "waiting for input"},
          std::pair{lost.evaluation_ratio, "in evaluation"},
          std::pair{lost.checkpoint_ratio, "checkpoints"}, std::pair{lost.stalled_ratio, "stalled"},
          std::pair{lost.idle_gpu_ratio, "held idle"}}) {
      if (r && *r >= 0.005) {
        parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", FormatPercent(*r), what);
      }
    }
    if (!parts.empty()) out += "; of the held time " + parts;
    out += "\n";
  }
  if (cost.energy_kwh) {
    out += fmt::format("  Cost     {}", FormatKwh(*cost.energy_kwh));
    std::string parts;
    if (cost.gpu_energy_kwh) parts += "GPUs " + FormatKwh(*cost.gpu_energy_kwh);
    if (cost.cpu_energy_kwh) {
      parts += (parts.empty() ? "" : ", ") + ("CPU " + FormatKwh(*cost.cpu_energy_kwh));
    }
    if (cost.pue && *cost.pue != 1) {
      parts += fmt::format("{}x PUE {:g}", parts.empty() ? "" : ", ", *cost.pue);
    }
    if (!parts.empty()) out += " (" + parts + ")";
    if (cost.co2e_kg) {
      out += fmt::format(", {} CO2e (estimate at {:g} g/kWh)", FormatKg(*cost.co2e_kg),
                         cost.grid_g_per_kwh.value_or(0));
    }
    out += "\n";
  }
  if (cost.money) {
    out += "  Cost     " + FormatMoney(*cost.money, currency);
    std::string parts;
    if (cost.money_gpu_hours) parts += "GPU-hours " + FormatMoney(*cost.money_gpu_hours, currency);
    if (cost.money_energy) {
      parts +=
          (parts.empty() ? "" : ", ") + ("energy " + FormatMoney(*cost.money_energy, currency));
    }
    if (!parts.empty()) out += " (" + parts + ")";
    out += "\n";
  }
  if (!cost.unpriced_models.empty()) {
    out += fmt::format("  Cost     no GPU-hour price for {} ([cost] gpu_hour_price)\n",
                       fmt::join(cost.unpriced_models, ", "));
  }
  if (const std::optional<CostForecast>& f = cost.forecast) {
    out += fmt::format("  Forecast all {} epochs would have taken {}{} (stopped after {})\n",
                       f->planned_epochs.value_or(0), FormatDuration(f->duration_s.value_or(0)),
                       Figures(*f, currency), f->epochs_done.value_or(0));
  }
  return out;
}

std::string FormatForecastLine(const CostForecast& forecast, const std::string& currency) {
  return fmt::format("trainvitals: forecast for all {} epochs (after {}): {} in all{}",
                     forecast.planned_epochs.value_or(0), forecast.epochs_done.value_or(0),
                     FormatDuration(forecast.duration_s.value_or(0)), Figures(forecast, currency));
}

}  // namespace tv

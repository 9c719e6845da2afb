#include "core/run_cost.h"

#include <algorithm>
#include <cctype>

namespace tv {
namespace {

bool ContainsNoCase(std::string_view text, std::string_view key) {
  auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  auto it = std::search(text.begin(), text.end(), key.begin(), key.end(),
                        [&](char a, char b) { return lower(a) == lower(b); });
  return it != text.end();
}

std::optional<double> GpuUse::*BasisField(BusyBasis basis) {
  return basis == BusyBasis::kSmActive ? &GpuUse::sm_active_ratio_mean : &GpuUse::util_ratio_mean;
}

}  // namespace

bool HasPrices(const CostRates& rates) {
  return rates.kwh_price.has_value() || !rates.gpu_hour_price.empty();
}

std::optional<double> GpuHourPrice(const CostRates& rates, std::string_view model) {
  std::optional<double> best;
  size_t best_length = 0;
  for (const auto& [key, price] : rates.gpu_hour_price) {
    if (key == "default") continue;
    if (key.size() > best_length && ContainsNoCase(model, key)) {
      best = price;
      best_length = key.size();
    }
  }
  if (best) return best;
  auto fallback = rates.gpu_hour_price.find("default");
  if (fallback != rates.gpu_hour_price.end()) return fallback->second;
  return std::nullopt;
}

std::vector<bool> JobUsedGpus(std::span<const GpuUse> gpus) {
  bool listed =
      std::any_of(gpus.begin(), gpus.end(), [](const GpuUse& g) { return g.processes_listed; });
  std::vector<bool> used(gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) {
    used[i] = !listed || gpus[i].job_processes_max > 0 || gpus[i].job_memory_bytes_max > 0;
  }
  return used;
}

std::string_view BusyBasisName(BusyBasis basis) {
  return basis == BusyBasis::kSmActive ? "sm_active_ratio" : "util_ratio";
}

std::optional<double> BusyShareOn(std::span<const GpuUse* const> used, BusyBasis basis) {
  if (used.empty()) return std::nullopt;
  std::optional<double> GpuUse::*field = BasisField(basis);
  double sum = 0;
  for (const GpuUse* g : used) {
    if (!(g->*field)) return std::nullopt;
    sum += *(g->*field);
  }
  return sum / static_cast<double>(used.size());
}

std::optional<BusyShare> BusyShareOf(std::span<const GpuUse* const> used) {
  for (BusyBasis basis : {BusyBasis::kSmActive, BusyBasis::kUtil}) {
    if (std::optional<double> share = BusyShareOn(used, basis)) return BusyShare{basis, *share};
  }
  return std::nullopt;
}

std::optional<double> GpuEnergyJoules(std::span<const GpuUse* const> used) {
  std::optional<double> joules;
  for (const GpuUse* g : used) {
    if (g->energy_joules) joules = joules.value_or(0) + *g->energy_joules;
  }
  return joules;
}

std::optional<double> EnergyKwh(std::optional<double> gpu_joules, std::optional<double> cpu_joules,
                                const CostRates& rates) {
  if (!gpu_joules && !cpu_joules) return std::nullopt;
  return (gpu_joules.value_or(0) + cpu_joules.value_or(0)) / kJoulesPerKwh * rates.pue;
}

std::optional<double> MoneyParts::Total() const {
  if (!gpu_hours && !energy) return std::nullopt;
  return gpu_hours.value_or(0) + energy.value_or(0);
}

MoneyParts PriceSpan(const CostRates& rates, std::span<const GpuUse* const> used, double hours_each,
                     std::optional<double> kwh) {
  MoneyParts m;
  if (!rates.gpu_hour_price.empty() && !used.empty()) {
    double sum = 0;
    bool every = true;
    for (const GpuUse* g : used) {
      if (!g->gpu_hour_price) every = false;
      sum += g->gpu_hour_price.value_or(0) * hours_each;
    }
    if (every) m.gpu_hours = sum;
  }
  if (rates.kwh_price && kwh) m.energy = *kwh * *rates.kwh_price;
  return m;
}

RunCost ComputeRunCost(std::span<const GpuUse> gpus, std::optional<double> cpu_energy_joules,
                       double duration_s, const CostRates& rates) {
  RunCost c;
  std::vector<bool> used = JobUsedGpus(gpus);
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (used[i]) c.used.push_back(&gpus[i]);
  }
  c.busy = BusyShareOf(c.used);
  c.gpu_energy_joules = GpuEnergyJoules(c.used);
  c.energy_kwh = EnergyKwh(c.gpu_energy_joules, cpu_energy_joules, rates);
  c.money = PriceSpan(rates, c.used, duration_s / 3600, c.energy_kwh);
  if (HasPrices(rates)) c.currency = rates.currency;
  return c;
}

}  // namespace tv

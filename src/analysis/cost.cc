#include "analysis/cost.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <vector>

#include "core/headline.h"
#include "store/epoch_record.h"

namespace tv {
namespace {

using Json = nlohmann::ordered_json;

double Round(double v, double scale) { return std::round(v * scale) / scale; }
// Hours, kWh and money to 6 significant digits: a short run's figures are
// small numbers, a long one's large.
double Sig(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  double scale = std::pow(10.0, 5 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}
Json Hours(double v) { return Sig(v); }
Json Money(double v) { return Sig(v); }

std::optional<double> Number(const Json& j, std::string_view key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

void PutMoney(const MoneyParts& m, bool parts, Json* out) {
  std::optional<double> total = m.Total();
  if (!total) return;
  (*out)["money"] = Money(*total);
  if (!parts) return;
  if (m.gpu_hours) (*out)["money_gpu_hours"] = Money(*m.gpu_hours);
  if (m.energy) (*out)["money_energy"] = Money(*m.energy);
}

// An epoch's or phase's GPU-hours and busy GPU-hours on the used GPUs, from
// its record's gpus[] (util_ratio_mean or sm_active_ratio_mean).
void PutSpanHours(const SpanResources& record, double duration_s,
                  std::span<const GpuUse* const> used, std::optional<BusyBasis> basis, Json* out) {
  (*out)["gpu_hours"] = Hours(duration_s * static_cast<double>(used.size()) / 3600);
  if (!basis) return;
  std::optional<double> SpanGpu::*field =
      *basis == BusyBasis::kSmActive ? &SpanGpu::sm_active_ratio_mean : &SpanGpu::util_ratio_mean;
  double busy = 0;
  size_t found = 0;
  for (const GpuUse* u : used) {
    for (const SpanGpu& g : record.gpus) {
      if (g.index != u->index) continue;
      if (auto b = g.*field) busy += *b, ++found;
    }
  }
  if (!used.empty() && found == used.size())
    (*out)["busy_gpu_hours"] = Hours(busy * duration_s / 3600);
}

Json EpochCost(const EpochRecord& epoch, std::span<const GpuUse* const> used,
               std::optional<BusyBasis> basis, const CostRates& rates) {
  double duration = epoch.duration_s;
  Json out = {{"epoch", epoch.epoch}, {"duration_s", Round(duration, 1e3)}};
  if (epoch.call) out["call"] = *epoch.call;
  if (!epoch.complete) out["complete"] = false;
  PutSpanHours(epoch.resources, duration, used, basis, &out);
  std::optional<double> gpu_joules;
  for (const GpuUse* u : used) {
    for (const SpanGpu& g : epoch.resources.gpus) {
      if (g.index != u->index) continue;
      if (g.energy_joules) gpu_joules = gpu_joules.value_or(0) + *g.energy_joules;
    }
  }
  std::optional<double> kwh = EnergyKwh(gpu_joules, epoch.resources.cpu_energy_joules, rates);
  if (kwh) {
    out["energy_kwh"] = Hours(*kwh);
    out["co2e_kg"] = Hours(*kwh * rates.grid_g_per_kwh / 1000);
  }
  PutMoney(PriceSpan(rates, used, duration / 3600, kwh), false, &out);
  return out;
}

}  // namespace

Json BuildCost(const Json& summary, const std::vector<GpuInfo>& meta_gpus, const CostRates& rates) {
  std::optional<double> duration = Number(summary, "duration_s");
  if (!duration) return Json();
  std::vector<GpuUse> gpus = GpuUsesOf(summary);
  std::vector<std::string> models;
  for (GpuUse& g : gpus) {
    models.push_back(GpuModelOf(meta_gpus, g.index));
    g.gpu_hour_price = GpuHourPrice(rates, models.back());
  }
  std::optional<double> cpu_joules;
  auto host = summary.find("host");
  if (host != summary.end() && host->is_object()) cpu_joules = Number(*host, "cpu_energy_joules");
  // The figures as the live rows have them (core/run_cost.h), written here.
  RunCost run = ComputeRunCost(gpus, cpu_joules, *duration, rates);
  const std::vector<const GpuUse*>& used = run.used;
  std::optional<BusyBasis> basis;
  if (run.busy) basis = run.busy->basis;
  double hours_each = *duration / 3600;
  double held = hours_each * static_cast<double>(used.size());

  Json c = {{"gpus_used", used.size()}, {"gpu_hours", Hours(held)}};
  if (run.busy) {
    double busy = run.busy->ratio * held;
    c["busy_gpu_hours"] = Hours(busy);
    c["busy_basis"] = BusyBasisName(run.busy->basis);
    c["busy_ratio"] = Round(run.busy->ratio, 1e4);
    c["wasted_gpu_hours"] = Hours(held - busy);
  }

  // Shares of the held time that did not train, from where the run's time
  // went (health.goodput): they do not overlap, so they add up to at most 100 %.
  Json lost = Json::object();
  const Json health = summary.value("health", Json::object());
  const Json ratios = health.value("goodput", Json::object()).value("ratios", Json::object());
  for (const char* key :
       {"startup", "data_wait", "evaluation", "checkpoint", "stalled", "idle_gpu"}) {
    if (auto r = Number(ratios, key); r && *r > 0) lost[std::string(key) + "_ratio"] = *r;
  }
  if (!used.empty()) c["lost"] = std::move(lost);

  if (run.energy_kwh) {
    if (run.gpu_energy_joules) c["gpu_energy_kwh"] = Hours(*run.gpu_energy_joules / kJoulesPerKwh);
    if (cpu_joules) c["cpu_energy_kwh"] = Hours(*cpu_joules / kJoulesPerKwh);
    c["pue"] = rates.pue;
    c["energy_kwh"] = Hours(*run.energy_kwh);
    c["grid_g_per_kwh"] = rates.grid_g_per_kwh;
    c["co2e_kg"] = Hours(*run.energy_kwh * rates.grid_g_per_kwh / 1000);
    c["co2e_estimate"] = true;
  }
  if (!run.currency.empty()) c["currency"] = run.currency;
  PutMoney(run.money, true, &c);
  // GPU-hour prices given, but none for a model the job used: said, not guessed.
  if (!rates.gpu_hour_price.empty()) {
    Json unpriced = Json::array();
    for (const GpuUse* u : used) {
      const std::string& model = models[static_cast<size_t>(u - gpus.data())];
      if (!u->gpu_hour_price &&
          std::find(unpriced.begin(), unpriced.end(), model) == unpriced.end()) {
        unpriced.push_back(model);
      }
    }
    if (!unpriced.empty()) c["unpriced_models"] = std::move(unpriced);
  }

  std::vector<EpochRecord> epochs;
  PhaseRecords phases;
  if (Status s = EpochsFromSummary(summary, &epochs); !s.ok())
    throw std::invalid_argument(s.message());
  if (Status s = PhasesFromSummary(summary, &phases); !s.ok())
    throw std::invalid_argument(s.message());
  Json epoch_costs = Json::array();
  for (const EpochRecord& e : epochs) epoch_costs.push_back(EpochCost(e, used, basis, rates));
  Json phase_costs = Json::object();
  for (const auto& [name, p] : phases) {
    Json pc = {{"duration_s", Round(p.duration_s, 1e3)}};
    PutSpanHours(p.resources, p.duration_s, used, basis, &pc);
    if (p.share) pc["share"] = *p.share;
    phase_costs[name] = std::move(pc);
  }

  // The forecast: the last framework call, if it said how many epochs it plans.
  Json forecast;
  if (!epochs.empty()) {
    const EpochRecord& last = epochs.back();
    std::optional<int64_t> planned = last.planned_epochs;
    if (planned && *planned >= 0 && *planned <= 1000000000) {
      Json call_epochs = Json::array();
      for (size_t i = 0; i < epochs.size(); ++i) {
        if (epochs[i].call == last.call) call_epochs.push_back(epoch_costs[i]);
      }
      Json so_far = {{"duration_s", *duration}};
      for (const char* key : {"energy_kwh", "co2e_kg", "money"}) {
        if (c.contains(key)) so_far[key] = c[key];
      }
      forecast = ForecastCost(so_far, call_epochs, *planned);
    }
  }
  c["epochs"] = std::move(epoch_costs);
  c["phases"] = std::move(phase_costs);
  if (!forecast.is_null()) c["forecast"] = std::move(forecast);
  return c;
}

Json ForecastCost(const Json& so_far, const Json& epochs, int64_t planned) {
  std::vector<const Json*> complete;
  for (const Json& e : epochs) {
    if (e.is_object() && e.value("complete", true)) complete.push_back(&e);
  }
  auto done = static_cast<int64_t>(complete.size());
  if (done == 0 || done >= planned) return Json();
  auto left = static_cast<double>(planned - done);
  Json out = {{"planned_epochs", planned}, {"epochs_done", done}};
  // Each figure: so far plus the mean of the complete epochs for each one left.
  for (const char* key : {"duration_s", "energy_kwh", "co2e_kg", "money"}) {
    std::optional<double> now = Number(so_far, key);
    double sum = 0;
    bool every = true;
    for (const Json* e : complete) {
      std::optional<double> v = Number(*e, key);
      if (!v) every = false;
      sum += v.value_or(0);
    }
    if (!now || !every) continue;
    double total = *now + left * sum / static_cast<double>(done);
    out[key] = std::string_view(key) == "duration_s" ? Json(Round(total, 1e1))
               : std::string_view(key) == "money"    ? Money(total)
                                                     : Hours(total);
  }
  return out;
}

}  // namespace tv

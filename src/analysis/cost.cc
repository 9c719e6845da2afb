#include "analysis/cost.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "analysis/round.h"
#include "core/metrics.h"
#include "store/headline.h"

namespace tv {
namespace {

// Hours, kWh and money to 6 significant digits: a short run's figures are
// small numbers, a long one's large.
double Sig(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  double scale = std::pow(10.0, 5 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}
double Hours(double v) { return Sig(v); }
double Money(double v) { return Sig(v); }

// An epoch's or phase's GPU-hours and busy GPU-hours on the used GPUs, from
// its record's gpus[] (util_ratio_mean or sm_active_ratio_mean).
template <typename SpanCost>
void PutSpanHours(const SpanResources& record, double duration_s,
                  std::span<const GpuUse* const> used, std::optional<BusyBasis> basis,
                  SpanCost* out) {
  out->gpu_hours = Hours(duration_s * static_cast<double>(used.size()) / 3600);
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
  if (!used.empty() && found == used.size()) out->busy_gpu_hours = Hours(busy * duration_s / 3600);
}

EpochCost CostOfEpoch(const EpochRecord& epoch, std::span<const GpuUse* const> used,
                      std::optional<BusyBasis> basis, const CostRates& rates) {
  double duration = epoch.duration_s;
  EpochCost out;
  out.epoch = epoch.epoch;
  out.duration_s = RoundTo(duration, 1e3);
  out.call = epoch.call;
  out.complete = epoch.complete;
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
    out.energy_kwh = Hours(*kwh);
    out.co2e_kg = Hours(*kwh * rates.grid_g_per_kwh / 1000);
  }
  if (auto money = PriceSpan(rates, used, duration / 3600, kwh).Total()) out.money = Money(*money);
  return out;
}

// Where the run's time went (summary.json health.goodput.ratios), as shares
// of the held time that did not train: they do not overlap, so they add up to
// at most 100 %. Each only when above 0.
CostLost LostOf(const std::optional<HealthRecord>& health) {
  CostLost lost;
  if (!health || !health->goodput) return lost;
  for (auto [spent, field] : {std::pair{Spent::kStartup, &CostLost::startup_ratio},
                              std::pair{Spent::kDataWait, &CostLost::data_wait_ratio},
                              std::pair{Spent::kEvaluation, &CostLost::evaluation_ratio},
                              std::pair{Spent::kCheckpoint, &CostLost::checkpoint_ratio},
                              std::pair{Spent::kStalled, &CostLost::stalled_ratio},
                              std::pair{Spent::kIdleGpu, &CostLost::idle_gpu_ratio}}) {
    if (double r = health->goodput->Ratio(spent); r > 0) lost.*field = r;
  }
  return lost;
}

}  // namespace

std::optional<CostInputs> CostInputsOf(const RunSummary& summary) {
  if (!summary.outcome.duration_s) return std::nullopt;  // a run without one is not costed
  CostInputs in;
  in.duration_s = *summary.outcome.duration_s;
  in.gpus = GpuUsesOf(summary.totals);
  in.cpu_energy_joules = summary.totals.run.Value(metric::kHostCpuEnergyJoules);
  in.lost = LostOf(summary.health);
  in.epochs = summary.epochs;
  in.phases = summary.phases;
  return in;
}

std::optional<CostRecord> BuildCost(const RunSummary& summary,
                                    const std::vector<GpuInfo>& meta_gpus, const CostRates& rates) {
  std::optional<CostInputs> in = CostInputsOf(summary);
  if (!in) return std::nullopt;
  return BuildCost(*in, meta_gpus, rates);
}

CostRecord BuildCost(const CostInputs& in, const std::vector<GpuInfo>& meta_gpus,
                     const CostRates& rates) {
  std::vector<GpuUse> gpus = in.gpus;
  std::vector<std::string> models;
  for (GpuUse& g : gpus) {
    models.push_back(GpuModelOf(meta_gpus, g.index));
    g.gpu_hour_price = GpuHourPrice(rates, models.back());
  }
  // The figures as the live rows have them (core/run_cost.h), written here.
  RunCost run = ComputeRunCost(gpus, in.cpu_energy_joules, in.duration_s, rates);
  const std::vector<const GpuUse*>& used = run.used;
  std::optional<BusyBasis> basis;
  if (run.busy) basis = run.busy->basis;
  double hours_each = in.duration_s / 3600;
  double held = hours_each * static_cast<double>(used.size());

  CostRecord c;
  c.gpus_used = static_cast<int64_t>(used.size());
  c.gpu_hours = Hours(held);
  if (run.busy) {
    double busy = run.busy->ratio * held;
    c.busy_gpu_hours = Hours(busy);
    c.busy_basis = BusyBasisName(run.busy->basis);
    c.busy_ratio = RoundTo(run.busy->ratio, 1e4);
    c.wasted_gpu_hours = Hours(held - busy);
  }
  if (!used.empty()) c.lost = in.lost;

  if (run.energy_kwh) {
    if (run.gpu_energy_joules) c.gpu_energy_kwh = Hours(*run.gpu_energy_joules / kJoulesPerKwh);
    if (in.cpu_energy_joules) c.cpu_energy_kwh = Hours(*in.cpu_energy_joules / kJoulesPerKwh);
    c.pue = rates.pue;
    c.energy_kwh = Hours(*run.energy_kwh);
    c.grid_g_per_kwh = rates.grid_g_per_kwh;
    c.co2e_kg = Hours(*run.energy_kwh * rates.grid_g_per_kwh / 1000);
    c.co2e_estimate = true;
  }
  c.currency = run.currency;
  if (std::optional<double> total = run.money.Total()) {
    c.money = Money(*total);
    if (run.money.gpu_hours) c.money_gpu_hours = Money(*run.money.gpu_hours);
    if (run.money.energy) c.money_energy = Money(*run.money.energy);
  }
  // GPU-hour prices given, but none for a model the job used: said, not guessed.
  if (!rates.gpu_hour_price.empty()) {
    for (const GpuUse* u : used) {
      const std::string& model = models[static_cast<size_t>(u - gpus.data())];
      if (!u->gpu_hour_price && std::find(c.unpriced_models.begin(), c.unpriced_models.end(),
                                          model) == c.unpriced_models.end()) {
        c.unpriced_models.push_back(model);
      }
    }
  }

  for (const EpochRecord& e : in.epochs) c.epochs.push_back(CostOfEpoch(e, used, basis, rates));
  for (const auto& [name, p] : in.phases) {
    PhaseCost& pc = c.phases.emplace_back(name, PhaseCost{}).second;
    pc.duration_s = RoundTo(p.duration_s, 1e3);
    PutSpanHours(p.resources, p.duration_s, used, basis, &pc);
    pc.share = p.share;
  }

  // The forecast: the last framework call, if it said how many epochs it plans.
  if (!in.epochs.empty()) {
    const EpochRecord& last = in.epochs.back();
    std::optional<int64_t> planned = last.planned_epochs;
    if (planned && *planned >= 0 && *planned <= 1000000000) {
      std::vector<EpochCost> call_epochs;
      for (size_t i = 0; i < in.epochs.size(); ++i) {
        if (in.epochs[i].call == last.call) call_epochs.push_back(c.epochs[i]);
      }
      c.forecast = ForecastCost(in.duration_s, c, call_epochs, *planned);
    }
  }
  return c;
}

std::optional<CostForecast> ForecastCost(double duration_s, const CostRecord& so_far,
                                         std::span<const EpochCost> epochs, int64_t planned) {
  std::vector<const EpochCost*> complete;
  for (const EpochCost& e : epochs) {
    if (e.complete) complete.push_back(&e);
  }
  auto done = static_cast<int64_t>(complete.size());
  if (done == 0 || done >= planned) return std::nullopt;
  auto left = static_cast<double>(planned - done);
  CostForecast out;
  out.planned_epochs = planned;
  out.epochs_done = done;
  // Each figure: so far plus the mean of the complete epochs for each one left.
  struct Figure {
    std::optional<double> now;
    std::optional<double> EpochCost::*each;
    std::optional<double> CostForecast::*total;
    double (*round)(double);
  };
  const Figure figures[] = {
      {duration_s, &EpochCost::duration_s, &CostForecast::duration_s,
       [](double v) { return RoundTo(v, 1e1); }},
      {so_far.energy_kwh, &EpochCost::energy_kwh, &CostForecast::energy_kwh, Hours},
      {so_far.co2e_kg, &EpochCost::co2e_kg, &CostForecast::co2e_kg, Hours},
      {so_far.money, &EpochCost::money, &CostForecast::money, Money},
  };
  for (const Figure& f : figures) {
    double sum = 0;
    bool every = true;
    for (const EpochCost* e : complete) {
      std::optional<double> v = e->*f.each;
      if (!v) every = false;
      sum += v.value_or(0);
    }
    if (!f.now || !every) continue;
    out.*f.total = f.round(*f.now + left * sum / static_cast<double>(done));
  }
  return out;
}

}  // namespace tv

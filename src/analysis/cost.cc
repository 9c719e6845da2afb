#include "analysis/cost.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

namespace tv {
namespace {

constexpr double kJoulesPerKwh = 3.6e6;

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

// summary["gpus"][i][key]["field"] (a gauge) or the plain number (a counter).
std::optional<double> Stat(const Json& gpu, std::string_view key, std::string_view field) {
  auto it = gpu.find(key);
  if (it == gpu.end()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  if (!it->is_object()) return std::nullopt;
  return Number(*it, field);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct UsedGpu {
  int index = 0;
  std::string model;
  std::optional<double> busy;  // the run's mean busy share on the basis
  std::optional<double> energy_joules;
};

// The GPU-hour price of `model`: the longest key found in its name, else
// "default"; absent when neither.
std::optional<double> GpuHourPrice(const CostRates& rates, const std::string& model) {
  std::string name = Lower(model);
  std::optional<double> best;
  size_t best_length = 0;
  for (const auto& [key, price] : rates.gpu_hour_price) {
    if (key == "default") continue;
    if (name.find(Lower(key)) != std::string::npos && key.size() > best_length) {
      best = price;
      best_length = key.size();
    }
  }
  if (best) return best;
  auto fallback = rates.gpu_hour_price.find("default");
  if (fallback != rates.gpu_hour_price.end()) return fallback->second;
  return std::nullopt;
}

bool HasPrices(const CostRates& rates) {
  return rates.kwh_price.has_value() || !rates.gpu_hour_price.empty();
}

// The GPUs the job used: where its processes or memory were seen; every
// watched GPU where the driver lists no processes (a container, some MIG).
std::vector<UsedGpu> UsedGpus(const Json& summary, const Json& meta) {
  const Json gpus = summary.value("gpus", Json::array());
  bool listed = std::any_of(gpus.begin(), gpus.end(),
                            [](const Json& g) { return g.contains("job_processes"); });
  std::vector<UsedGpu> out;
  for (const Json& g : gpus) {
    if (!g.is_object()) continue;
    bool used = !listed || Stat(g, "job_processes", "max").value_or(0) > 0 ||
                Stat(g, "job_memory_bytes", "max").value_or(0) > 0;
    if (!used) continue;
    UsedGpu u;
    u.index = g.value("index", 0);
    for (const Json& m : meta.value("gpus", Json::array())) {
      if (m.is_object() && m.value("index", -1) == u.index) u.model = m.value("name", "");
    }
    u.energy_joules = Stat(g, "energy_joules", "");
    out.push_back(std::move(u));
  }
  return out;
}

// Fills each used GPU's busy share from `key` ("sm_active_ratio" where every
// used GPU measured it, else "util_ratio"); returns the basis, "" for none.
std::string FillBusy(const Json& summary, std::vector<UsedGpu>& used) {
  const Json gpus = summary.value("gpus", Json::array());
  auto find = [&](int index) -> const Json* {
    for (const Json& g : gpus) {
      if (g.is_object() && g.value("index", -1) == index) return &g;
    }
    return nullptr;
  };
  for (const char* basis : {"sm_active_ratio", "util_ratio"}) {
    bool all = !used.empty() && std::all_of(used.begin(), used.end(), [&](const UsedGpu& u) {
      const Json* g = find(u.index);
      return g != nullptr && Stat(*g, basis, "mean").has_value();
    });
    if (!all) continue;
    for (UsedGpu& u : used) u.busy = Stat(*find(u.index), basis, "mean");
    return basis;
  }
  return "";
}

// What `hours` on each of `used` and `kwh` cost; absent without a price for
// every part that has a quantity.
struct MoneyParts {
  std::optional<double> gpu_hours, energy;
  std::optional<double> Total() const {
    if (!gpu_hours && !energy) return std::nullopt;
    return gpu_hours.value_or(0) + energy.value_or(0);
  }
};

MoneyParts Price(const CostRates& rates, const std::vector<UsedGpu>& used, double hours_each,
                 std::optional<double> kwh) {
  MoneyParts m;
  if (!rates.gpu_hour_price.empty() && !used.empty()) {
    double sum = 0;
    bool every = true;
    for (const UsedGpu& u : used) {
      std::optional<double> price = GpuHourPrice(rates, u.model);
      if (!price) every = false;
      sum += price.value_or(0) * hours_each;
    }
    if (every) m.gpu_hours = sum;
  }
  if (rates.kwh_price && kwh) m.energy = *kwh * *rates.kwh_price;
  return m;
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
void PutSpanHours(const Json& record, double duration_s, const std::vector<UsedGpu>& used,
                  const std::string& basis, Json* out) {
  (*out)["gpu_hours"] = Hours(duration_s * static_cast<double>(used.size()) / 3600);
  std::string key = basis + "_mean";
  double busy = 0;
  size_t found = 0;
  for (const UsedGpu& u : used) {
    for (const Json& g : record.value("gpus", Json::array())) {
      if (!g.is_object() || g.value("index", -1) != u.index) continue;
      if (auto b = Number(g, key)) busy += *b, ++found;
    }
  }
  if (!used.empty() && found == used.size())
    (*out)["busy_gpu_hours"] = Hours(busy * duration_s / 3600);
}

Json EpochCost(const Json& epoch, const std::vector<UsedGpu>& used, const std::string& basis,
               const CostRates& rates) {
  double duration = Number(epoch, "duration_s").value_or(0);
  Json out = {{"epoch", epoch.value("epoch", Json())}, {"duration_s", Round(duration, 1e3)}};
  if (epoch.contains("call")) out["call"] = epoch["call"];
  if (epoch.contains("complete")) out["complete"] = epoch["complete"];
  PutSpanHours(epoch, duration, used, basis, &out);
  std::optional<double> joules;
  for (const UsedGpu& u : used) {
    for (const Json& g : epoch.value("gpus", Json::array())) {
      if (!g.is_object() || g.value("index", -1) != u.index) continue;
      if (auto j = Number(g, "energy_joules")) joules = joules.value_or(0) + *j;
    }
  }
  if (auto cpu = Number(epoch, "cpu_energy_joules")) joules = joules.value_or(0) + *cpu;
  std::optional<double> kwh;
  if (joules) {
    kwh = *joules / kJoulesPerKwh * rates.pue;
    out["energy_kwh"] = Hours(*kwh);
    out["co2e_kg"] = Hours(*kwh * rates.grid_g_per_kwh / 1000);
  }
  PutMoney(Price(rates, used, duration / 3600, kwh), false, &out);
  return out;
}

}  // namespace

Json BuildCost(const Json& summary, const Json& meta, const CostRates& rates) {
  std::optional<double> duration = Number(summary, "duration_s");
  if (!duration) return Json();
  std::vector<UsedGpu> used = UsedGpus(summary, meta);
  std::string basis = FillBusy(summary, used);
  double hours_each = *duration / 3600;
  double held = hours_each * static_cast<double>(used.size());

  Json c = {{"gpus_used", used.size()}, {"gpu_hours", Hours(held)}};
  std::optional<double> busy_ratio;
  if (!basis.empty()) {
    double busy = 0;
    for (const UsedGpu& u : used) busy += *u.busy * hours_each;
    c["busy_gpu_hours"] = Hours(busy);
    c["busy_basis"] = basis;
    busy_ratio = held > 0 ? busy / held : 0;
    c["busy_ratio"] = Round(*busy_ratio, 1e4);
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

  std::optional<double> gpu_kwh, cpu_kwh;
  for (const UsedGpu& u : used) {
    if (u.energy_joules) gpu_kwh = gpu_kwh.value_or(0) + *u.energy_joules / kJoulesPerKwh;
  }
  auto host = summary.find("host");
  if (host != summary.end() && host->is_object()) {
    if (auto j = Number(*host, "cpu_energy_joules")) cpu_kwh = *j / kJoulesPerKwh;
  }
  std::optional<double> kwh;
  if (gpu_kwh || cpu_kwh) {
    if (gpu_kwh) c["gpu_energy_kwh"] = Hours(*gpu_kwh);
    if (cpu_kwh) c["cpu_energy_kwh"] = Hours(*cpu_kwh);
    kwh = (gpu_kwh.value_or(0) + cpu_kwh.value_or(0)) * rates.pue;
    c["pue"] = rates.pue;
    c["energy_kwh"] = Hours(*kwh);
    c["grid_g_per_kwh"] = rates.grid_g_per_kwh;
    c["co2e_kg"] = Hours(*kwh * rates.grid_g_per_kwh / 1000);
    c["co2e_estimate"] = true;
  }
  if (HasPrices(rates)) c["currency"] = rates.currency;
  PutMoney(Price(rates, used, hours_each, kwh), true, &c);
  // GPU-hour prices given, but none for a model the job used: said, not guessed.
  if (!rates.gpu_hour_price.empty()) {
    Json unpriced = Json::array();
    for (const UsedGpu& u : used) {
      if (!GpuHourPrice(rates, u.model) &&
          std::find(unpriced.begin(), unpriced.end(), u.model) == unpriced.end()) {
        unpriced.push_back(u.model);
      }
    }
    if (!unpriced.empty()) c["unpriced_models"] = std::move(unpriced);
  }

  const Json epochs = summary.value("epochs", Json::array());
  const Json phases = summary.value("phases", Json::object());
  Json epoch_costs = Json::array();
  for (const Json& e : epochs) {
    if (e.is_object()) epoch_costs.push_back(EpochCost(e, used, basis, rates));
  }
  Json phase_costs = Json::object();
  for (const auto& [name, p] : phases.items()) {
    if (!p.is_object()) continue;
    double d = Number(p, "duration_s").value_or(0);
    Json pc = {{"duration_s", Round(d, 1e3)}};
    PutSpanHours(p, d, used, basis, &pc);
    if (auto share = Number(p, "share")) pc["share"] = *share;
    phase_costs[name] = std::move(pc);
  }

  // The forecast: the last framework call, if it said how many epochs it plans.
  Json forecast;
  if (!epochs.empty()) {
    const Json& last = epochs.back();
    std::optional<double> planned = Number(last, "planned_epochs");
    if (planned && *planned >= 0 && *planned <= 1e9) {  // a file's number, cast only if it fits
      Json call_epochs = Json::array();
      for (const Json& ec : epoch_costs) {
        if (ec.value("call", Json()) == last.value("call", Json())) call_epochs.push_back(ec);
      }
      Json so_far = {{"duration_s", *duration}};
      for (const char* key : {"energy_kwh", "co2e_kg", "money"}) {
        if (c.contains(key)) so_far[key] = c[key];
      }
      forecast = ForecastCost(so_far, call_epochs, static_cast<int64_t>(*planned));
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

#include "store/cost_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "store/record_json.h"

namespace tv {
namespace {

using OJson = nlohmann::ordered_json;

// ---- Writing ----

OJson LostJson(const CostLost& l) {
  OJson j = OJson::object();
  Put(j, "startup_ratio", l.startup_ratio);
  Put(j, "data_wait_ratio", l.data_wait_ratio);
  Put(j, "evaluation_ratio", l.evaluation_ratio);
  Put(j, "checkpoint_ratio", l.checkpoint_ratio);
  Put(j, "stalled_ratio", l.stalled_ratio);
  Put(j, "idle_gpu_ratio", l.idle_gpu_ratio);
  return j;
}

OJson EpochJson(const EpochCost& e) {
  OJson j = OJson::object();
  Put(j, "epoch", e.epoch);
  Put(j, "duration_s", e.duration_s);
  Put(j, "call", e.call);
  if (!e.complete) j["complete"] = false;
  Put(j, "gpu_hours", e.gpu_hours);
  Put(j, "busy_gpu_hours", e.busy_gpu_hours);
  Put(j, "energy_kwh", e.energy_kwh);
  Put(j, "co2e_kg", e.co2e_kg);
  Put(j, "money", e.money);
  return j;
}

OJson PhaseJson(const PhaseCost& p) {
  OJson j = OJson::object();
  Put(j, "duration_s", p.duration_s);
  Put(j, "gpu_hours", p.gpu_hours);
  Put(j, "busy_gpu_hours", p.busy_gpu_hours);
  Put(j, "share", p.share);
  return j;
}

// ---- Reading ----

// Every view shows a cost as far as it can be read.
template <typename Json>
using Reader = RecordFields<Json>;

template <typename Json>
void ReadForecast(Reader<Json>& r, CostForecast* f) {
  r.Whole("planned_epochs", &f->planned_epochs);
  r.Whole("epochs_done", &f->epochs_done);
  r.Number("duration_s", &f->duration_s);
  r.Number("energy_kwh", &f->energy_kwh);
  r.Number("co2e_kg", &f->co2e_kg);
  r.Number("money", &f->money);
  r.Text("currency", &f->currency);
}

template <typename Json>
void ReadCost(Reader<Json>& r, CostRecord* c) {
  r.Whole("gpus_used", &c->gpus_used);
  r.Number("gpu_hours", &c->gpu_hours);
  r.Number("busy_gpu_hours", &c->busy_gpu_hours);
  r.Text("busy_basis", &c->busy_basis);
  r.Number("busy_ratio", &c->busy_ratio);
  r.Number("wasted_gpu_hours", &c->wasted_gpu_hours);
  r.Member("lost", [&](Reader<Json>& l) {
    CostLost& lost = c->lost.emplace();
    l.Number("startup_ratio", &lost.startup_ratio);
    l.Number("data_wait_ratio", &lost.data_wait_ratio);
    l.Number("evaluation_ratio", &lost.evaluation_ratio);
    l.Number("checkpoint_ratio", &lost.checkpoint_ratio);
    l.Number("stalled_ratio", &lost.stalled_ratio);
    l.Number("idle_gpu_ratio", &lost.idle_gpu_ratio);
  });
  r.Number("gpu_energy_kwh", &c->gpu_energy_kwh);
  r.Number("cpu_energy_kwh", &c->cpu_energy_kwh);
  r.Number("pue", &c->pue);
  r.Number("energy_kwh", &c->energy_kwh);
  r.Number("grid_g_per_kwh", &c->grid_g_per_kwh);
  r.Number("co2e_kg", &c->co2e_kg);
  r.Bool("co2e_estimate", &c->co2e_estimate);
  r.Text("currency", &c->currency);
  r.Number("money", &c->money);
  r.Number("money_gpu_hours", &c->money_gpu_hours);
  r.Number("money_energy", &c->money_energy);
  r.Texts("unpriced_models", &c->unpriced_models);
  r.Objects("epochs", [&](Reader<Json>& e) {
    EpochCost& epoch = c->epochs.emplace_back();
    e.Whole("epoch", &epoch.epoch);
    e.Number("duration_s", &epoch.duration_s);
    e.Whole("call", &epoch.call);
    std::optional<bool> complete;
    e.Bool("complete", &complete);
    epoch.complete = complete.value_or(true);
    e.Number("gpu_hours", &epoch.gpu_hours);
    e.Number("busy_gpu_hours", &epoch.busy_gpu_hours);
    e.Number("energy_kwh", &epoch.energy_kwh);
    e.Number("co2e_kg", &epoch.co2e_kg);
    e.Number("money", &epoch.money);
  });
  r.Members("phases", [&](const std::string& name, Reader<Json>& p) {
    PhaseCost& phase = c->phases.emplace_back(name, PhaseCost{}).second;
    p.Number("duration_s", &phase.duration_s);
    p.Number("gpu_hours", &phase.gpu_hours);
    p.Number("busy_gpu_hours", &phase.busy_gpu_hours);
    p.Number("share", &phase.share);
  });
  r.Member("forecast", [&](Reader<Json>& f) { ReadForecast(f, &c->forecast.emplace()); });
}

template <typename Json>
Status ReadCostObject(const Json& j, const std::string& at, CostRecord* out) {
  *out = CostRecord{};
  std::string error;
  Reader<Json> r(j, at, &error, RecordReading::kKeepGoing);
  if (r.Object()) ReadCost(r, out);
  return ReadingStatus(error);
}

template <typename Json>
Status ReadForecastObject(const Json& j, CostForecast* out) {
  *out = CostForecast{};
  std::string error;
  Reader<Json> r(j, "", &error, RecordReading::kKeepGoing);
  if (r.Object()) ReadForecast(r, out);
  return ReadingStatus(error);
}

template <typename Json>
Status ReadSummaryCost(const Json& summary, std::optional<CostRecord>* out) {
  out->reset();
  if (!summary.is_object()) return Status::Ok();
  auto it = summary.find("cost");
  if (it == summary.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) {
    return Status::Invalid(fmt::format("key cost: expected an object, got {}", JsonKindName(*it)));
  }
  return ReadCostObject(*it, "cost", &out->emplace());
}

}  // namespace

OJson ToJson(const CostRecord& c) {
  OJson j = OJson::object();
  Put(j, "gpus_used", c.gpus_used);
  Put(j, "gpu_hours", c.gpu_hours);
  Put(j, "busy_gpu_hours", c.busy_gpu_hours);
  PutText(j, "busy_basis", c.busy_basis);
  Put(j, "busy_ratio", c.busy_ratio);
  Put(j, "wasted_gpu_hours", c.wasted_gpu_hours);
  if (c.lost) j["lost"] = LostJson(*c.lost);
  Put(j, "gpu_energy_kwh", c.gpu_energy_kwh);
  Put(j, "cpu_energy_kwh", c.cpu_energy_kwh);
  Put(j, "pue", c.pue);
  Put(j, "energy_kwh", c.energy_kwh);
  Put(j, "grid_g_per_kwh", c.grid_g_per_kwh);
  Put(j, "co2e_kg", c.co2e_kg);
  Put(j, "co2e_estimate", c.co2e_estimate);
  PutText(j, "currency", c.currency);
  Put(j, "money", c.money);
  Put(j, "money_gpu_hours", c.money_gpu_hours);
  Put(j, "money_energy", c.money_energy);
  if (!c.unpriced_models.empty()) j["unpriced_models"] = c.unpriced_models;
  OJson epochs = OJson::array();
  for (const EpochCost& e : c.epochs) epochs.push_back(EpochJson(e));
  j["epochs"] = std::move(epochs);
  OJson phases = OJson::object();
  for (const auto& [name, p] : c.phases) phases[name] = PhaseJson(p);
  j["phases"] = std::move(phases);
  if (c.forecast) j["forecast"] = ToJson(*c.forecast);
  return j;
}

OJson ToJson(const CostForecast& f) {
  OJson j = OJson::object();
  Put(j, "planned_epochs", f.planned_epochs);
  Put(j, "epochs_done", f.epochs_done);
  Put(j, "duration_s", f.duration_s);
  Put(j, "energy_kwh", f.energy_kwh);
  Put(j, "co2e_kg", f.co2e_kg);
  Put(j, "money", f.money);
  PutText(j, "currency", f.currency);
  return j;
}

Status CostFromJson(const nlohmann::json& j, CostRecord* out) { return ReadCostObject(j, "", out); }
Status CostFromJson(const OJson& j, CostRecord* out) { return ReadCostObject(j, "", out); }
Status ForecastFromJson(const nlohmann::json& j, CostForecast* out) {
  return ReadForecastObject(j, out);
}
Status ForecastFromJson(const OJson& j, CostForecast* out) { return ReadForecastObject(j, out); }

Status CostFromSummary(const nlohmann::json& summary, std::optional<CostRecord>* out) {
  return ReadSummaryCost(summary, out);
}
Status CostFromSummary(const OJson& summary, std::optional<CostRecord>* out) {
  return ReadSummaryCost(summary, out);
}

std::optional<CostRecord> CostOf(const nlohmann::json& summary) {
  std::optional<CostRecord> cost;
  (void)CostFromSummary(summary, &cost);
  return cost;
}
std::optional<CostRecord> CostOf(const OJson& summary) {
  std::optional<CostRecord> cost;
  (void)CostFromSummary(summary, &cost);
  return cost;
}

CostRecord AddCosts(std::span<const CostRecord> nodes) {
  CostRecord sum;
  if (nodes.empty()) return sum;
  auto add = [&](auto field, auto* out) {
    for (const CostRecord& n : nodes) {
      if (!(n.*field)) {
        out->reset();
        return;
      }
      *out = out->value_or(0) + *(n.*field);
    }
  };
  add(&CostRecord::gpus_used, &sum.gpus_used);
  add(&CostRecord::gpu_hours, &sum.gpu_hours);
  add(&CostRecord::busy_gpu_hours, &sum.busy_gpu_hours);
  add(&CostRecord::wasted_gpu_hours, &sum.wasted_gpu_hours);
  add(&CostRecord::gpu_energy_kwh, &sum.gpu_energy_kwh);
  add(&CostRecord::cpu_energy_kwh, &sum.cpu_energy_kwh);
  add(&CostRecord::energy_kwh, &sum.energy_kwh);
  add(&CostRecord::co2e_kg, &sum.co2e_kg);
  sum.busy_basis = nodes[0].busy_basis;
  if (sum.busy_gpu_hours && sum.gpu_hours && *sum.gpu_hours > 0) {
    sum.busy_ratio = *sum.busy_gpu_hours / *sum.gpu_hours;
  }
  sum.pue = nodes[0].pue;
  sum.grid_g_per_kwh = nodes[0].grid_g_per_kwh;
  sum.co2e_estimate = nodes[0].co2e_estimate;
  bool one_currency = std::all_of(nodes.begin(), nodes.end(), [&](const CostRecord& n) {
    return n.currency == nodes[0].currency;
  });
  if (one_currency) {
    sum.currency = nodes[0].currency;
    add(&CostRecord::money, &sum.money);
    add(&CostRecord::money_gpu_hours, &sum.money_gpu_hours);
    add(&CostRecord::money_energy, &sum.money_energy);
  }
  return sum;
}

}  // namespace tv

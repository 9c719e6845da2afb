#include "store/cost_record.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string_view>

namespace tv {
namespace {

using OJson = nlohmann::ordered_json;

// ---- Writing ----

template <typename T>
void Put(OJson& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

void PutText(OJson& j, const char* key, const std::string& v) {
  if (!v.empty()) j[key] = v;
}

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

std::string_view KindName(const auto& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

// The keys of one JSON object read into fields. A key of the wrong type
// leaves its field as it was; the first is kept as the error, named by its
// path from the document ("at"), and reading goes on.
template <typename Json>
class Reader {
 public:
  Reader(const Json& j, std::string at, std::string* error)
      : j_(j), at_(std::move(at)), error_(error) {}

  bool Object() {
    if (j_.is_object()) return true;
    if (!j_.is_null()) Fail(at_, "an object", j_);
    return false;
  }
  // The value of `key`; null when absent or null.
  const Json* Find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string Path(std::string_view key) const {
    return at_.empty() ? std::string(key) : fmt::format("{}.{}", at_, key);
  }
  void Number(const char* key, std::optional<double>* out) {
    if (const Json* v = Find(key)) {
      if (v->is_number()) {
        *out = v->template get<double>();
      } else {
        Fail(Path(key), "a number", *v);
      }
    }
  }
  void Whole(const char* key, std::optional<int64_t>* out) {
    const Json* v = Find(key);
    if (v == nullptr) return;
    if (v->is_number_integer() &&
        (!v->is_number_unsigned() ||
         v->template get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()})) {
      *out = v->template get<int64_t>();
      return;
    }
    // A whole number written as a float (30e9) is one; a fraction is not.
    if (v->is_number_float()) {
      double d = v->template get<double>();
      if (d == std::floor(d) && std::fabs(d) < 9.2e18) {
        *out = std::llround(d);
        return;
      }
    }
    if (v->is_number()) {
      if (error_->empty()) {
        *error_ = fmt::format("key {}: expected a whole number, got {}", Path(key), v->dump());
      }
    } else {
      Fail(Path(key), "a whole number", *v);
    }
  }
  void Text(const char* key, std::string* out) {
    if (const Json* v = Find(key)) {
      if (v->is_string()) {
        *out = v->template get<std::string>();
      } else {
        Fail(Path(key), "a string", *v);
      }
    }
  }
  void Bool(const char* key, std::optional<bool>* out) {
    if (const Json* v = Find(key)) {
      if (v->is_boolean()) {
        *out = v->template get<bool>();
      } else {
        Fail(Path(key), "a boolean", *v);
      }
    }
  }
  // An object `key` read by `each(reader)`; false when absent or not one.
  template <typename Each>
  bool Member(const char* key, Each each) {
    const Json* v = Find(key);
    if (v == nullptr) return false;
    Reader r(*v, Path(key), error_);
    if (!r.Object()) return false;
    each(r);
    return true;
  }
  // An array `key`, each element an object read by `each(reader)`; elements
  // that are not objects are left out.
  template <typename Each>
  void Objects(const char* key, Each each) {
    const Json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_array()) return Fail(Path(key), "an array", *v);
    for (size_t i = 0; i < v->size(); ++i) {
      Reader r((*v)[i], fmt::format("{}[{}]", Path(key), i), error_);
      if (r.Object()) each(r);
    }
  }
  // An object `key` of objects, each read by `each(name, reader)`.
  template <typename Each>
  void Named(const char* key, Each each) {
    const Json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_object()) return Fail(Path(key), "an object", *v);
    for (auto it = v->begin(); it != v->end(); ++it) {
      Reader r(*it, Path(key) + "." + it.key(), error_);
      if (r.Object()) each(it.key(), r);
    }
  }
  // An array of strings `key`; elements of another type are left out.
  void Texts(const char* key, std::vector<std::string>* out) {
    const Json* v = Find(key);
    if (v == nullptr) return;
    if (!v->is_array()) return Fail(Path(key), "an array", *v);
    for (size_t i = 0; i < v->size(); ++i) {
      const Json& e = (*v)[i];
      if (e.is_string()) {
        out->push_back(e.template get<std::string>());
      } else {
        Fail(fmt::format("{}[{}]", Path(key), i), "a string", e);
      }
    }
  }

 private:
  void Fail(const std::string& at, std::string_view expected, const Json& got) {
    if (!error_->empty()) return;
    *error_ = at.empty() ? fmt::format("expected {}, got {}", expected, KindName(got))
                         : fmt::format("key {}: expected {}, got {}", at, expected, KindName(got));
  }

  const Json& j_;
  std::string at_;
  std::string* error_;
};

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
  r.Named("phases", [&](const std::string& name, Reader<Json>& p) {
    PhaseCost& phase = c->phases.emplace_back(name, PhaseCost{}).second;
    p.Number("duration_s", &phase.duration_s);
    p.Number("gpu_hours", &phase.gpu_hours);
    p.Number("busy_gpu_hours", &phase.busy_gpu_hours);
    p.Number("share", &phase.share);
  });
  r.Member("forecast", [&](Reader<Json>& f) { ReadForecast(f, &c->forecast.emplace()); });
}

Status Result(const std::string& error) {
  return error.empty() ? Status::Ok() : Status::Invalid(error);
}

template <typename Json>
Status ReadCostObject(const Json& j, const std::string& at, CostRecord* out) {
  *out = CostRecord{};
  std::string error;
  Reader<Json> r(j, at, &error);
  if (r.Object()) ReadCost(r, out);
  return Result(error);
}

template <typename Json>
Status ReadForecastObject(const Json& j, CostForecast* out) {
  *out = CostForecast{};
  std::string error;
  Reader<Json> r(j, "", &error);
  if (r.Object()) ReadForecast(r, out);
  return Result(error);
}

template <typename Json>
Status ReadSummaryCost(const Json& summary, std::optional<CostRecord>* out) {
  out->reset();
  if (!summary.is_object()) return Status::Ok();
  auto it = summary.find("cost");
  if (it == summary.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) {
    return Status::Invalid(fmt::format("key cost: expected an object, got {}", KindName(*it)));
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

}  // namespace tv

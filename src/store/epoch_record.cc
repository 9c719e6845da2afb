#include "store/epoch_record.h"

#include <fmt/format.h>

#include "store/record_json.h"

namespace tv {
namespace {

using OJson = nlohmann::ordered_json;

// ---- Writing ----

OJson GpuToJson(const SpanGpu& g) {
  OJson j = {{"index", g.index}};
  Put(j, "mig", g.mig);
  Put(j, "util_ratio_mean", g.util_ratio_mean);
  Put(j, "memory_used_bytes_max", g.memory_used_bytes_max);
  Put(j, "sm_active_ratio_mean", g.sm_active_ratio_mean);
  Put(j, "job_memory_bytes_max", g.job_memory_bytes_max);
  Put(j, "job_sm_util_ratio_mean", g.job_sm_util_ratio_mean);
  Put(j, "other_memory_bytes_max", g.other_memory_bytes_max);
  Put(j, "allocator_peak_bytes", g.allocator_peak_bytes);
  Put(j, "temperature_celsius_max", g.temperature_celsius_max);
  Put(j, "power_watts_mean", g.power_watts_mean);
  Put(j, "energy_joules", g.energy_joules);
  return j;
}

void PutResources(const SpanResources& r, OJson& j) {
  Put(j, "cpu_cores_mean", r.cpu_cores_mean);
  Put(j, "memory_bytes_max", r.memory_bytes_max);
  Put(j, "host_memory_used_bytes_max", r.host_memory_used_bytes_max);
  Put(j, "data_wait_ratio", r.data_wait_ratio);
  if (!r.gpus.empty()) {
    OJson gpus = OJson::array();
    for (const SpanGpu& g : r.gpus) gpus.push_back(GpuToJson(g));
    j["gpus"] = std::move(gpus);
  }
  Put(j, "cpu_energy_joules", r.cpu_energy_joules);
}

// ---- Reading ----

template <typename Json>
using Reader = RecordFields<Json>;

template <typename Json>
void ReadResources(Reader<Json>& r, SpanResources* out) {
  r.Number("cpu_cores_mean", &out->cpu_cores_mean);
  r.Whole("memory_bytes_max", &out->memory_bytes_max);
  r.Whole("host_memory_used_bytes_max", &out->host_memory_used_bytes_max);
  r.Number("data_wait_ratio", &out->data_wait_ratio);
  r.Objects("gpus", [&](Reader<Json>& g) {
    SpanGpu& gpu = out->gpus.emplace_back();
    g.Whole("index", &gpu.index);
    g.Whole("mig", &gpu.mig);
    g.Number("util_ratio_mean", &gpu.util_ratio_mean);
    g.Whole("memory_used_bytes_max", &gpu.memory_used_bytes_max);
    g.Number("sm_active_ratio_mean", &gpu.sm_active_ratio_mean);
    g.Whole("job_memory_bytes_max", &gpu.job_memory_bytes_max);
    g.Number("job_sm_util_ratio_mean", &gpu.job_sm_util_ratio_mean);
    g.Whole("other_memory_bytes_max", &gpu.other_memory_bytes_max);
    g.Whole("allocator_peak_bytes", &gpu.allocator_peak_bytes);
    g.Number("temperature_celsius_max", &gpu.temperature_celsius_max);
    g.Number("power_watts_mean", &gpu.power_watts_mean);
    g.Number("energy_joules", &gpu.energy_joules);
  });
  r.Number("cpu_energy_joules", &out->cpu_energy_joules);
}

template <typename Json>
std::string ReadEpoch(const Json& j, const std::string& at, EpochRecord* out) {
  std::string error;
  Reader<Json> r(j, at, &error);
  *out = EpochRecord{};
  if (!r.Object()) return error;
  r.Whole("epoch", &out->epoch);
  r.Number("start_t", &out->start_t);
  r.Number("duration_s", &out->duration_s);
  r.Whole("steps", &out->steps);
  r.Number("steps_per_second", &out->steps_per_second);
  r.Whole("call", &out->call);
  r.Whole("planned_epochs", &out->planned_epochs);
  r.Bool("complete", &out->complete);
  ReadResources(r, &out->resources);
  r.Numbers("logs", &out->logs);
  r.Objects("ranks", [&](Reader<Json>& rank) {
    EpochRank& k = out->ranks.emplace_back();
    rank.Whole("rank", &k.rank);
    rank.Number("duration_s", &k.duration_s);
    rank.Whole("steps", &k.steps);
  });
  return error;
}

template <typename Json>
std::string ReadPhase(const Json& j, const std::string& at, PhaseRecord* out) {
  std::string error;
  Reader<Json> r(j, at, &error);
  *out = PhaseRecord{};
  if (!r.Object()) return error;
  r.Number("duration_s", &out->duration_s);
  r.Whole("count", &out->count);
  r.Number("share", &out->share);
  ReadResources(r, &out->resources);
  return error;
}

template <typename Json>
Status ReadEpochs(const Json& summary, std::vector<EpochRecord>* out) {
  out->clear();
  auto it = summary.find("epochs");
  if (it == summary.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) {
    return Status::Invalid(fmt::format("key epochs: expected an array, got {}", JsonKindName(*it)));
  }
  out->resize(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    std::string error = ReadEpoch((*it)[i], fmt::format("epochs[{}]", i), &(*out)[i]);
    if (!error.empty()) return Status::Invalid(error);
  }
  return Status::Ok();
}

template <typename Json>
Status ReadPhases(const Json& summary, PhaseRecords* out) {
  out->clear();
  auto it = summary.find("phases");
  if (it == summary.end() || it->is_null()) return Status::Ok();
  if (!it->is_object()) {
    return Status::Invalid(
        fmt::format("key phases: expected an object, got {}", JsonKindName(*it)));
  }
  for (auto p = it->begin(); p != it->end(); ++p) {
    auto& [name, phase] = out->emplace_back(p.key(), PhaseRecord{});
    std::string error = ReadPhase(*p, "phases." + name, &phase);
    if (!error.empty()) return Status::Invalid(error);
  }
  return Status::Ok();
}

}  // namespace

OJson ToJson(const EpochRecord& e) {
  OJson j = {
      {"epoch", e.epoch}, {"start_t", e.start_t}, {"duration_s", e.duration_s}, {"steps", e.steps}};
  Put(j, "steps_per_second", e.steps_per_second);
  Put(j, "call", e.call);
  Put(j, "planned_epochs", e.planned_epochs);
  if (!e.complete) j["complete"] = false;
  PutResources(e.resources, j);
  if (!e.logs.empty()) {
    OJson logs = OJson::object();
    for (const auto& [name, value] : e.logs) logs[name] = value ? OJson(*value) : OJson();
    j["logs"] = std::move(logs);
  }
  if (!e.ranks.empty()) {
    OJson ranks = OJson::array();
    for (const EpochRank& r : e.ranks) {
      OJson k = {{"rank", r.rank}};
      Put(k, "duration_s", r.duration_s);
      Put(k, "steps", r.steps);
      ranks.push_back(std::move(k));
    }
    j["ranks"] = std::move(ranks);
  }
  return j;
}

OJson ToJson(const PhaseRecord& p) {
  OJson j = {{"duration_s", p.duration_s}, {"count", p.count}};
  Put(j, "share", p.share);
  PutResources(p.resources, j);
  return j;
}

OJson EpochsToJson(std::span<const EpochRecord> epochs) {
  OJson out = OJson::array();
  for (const EpochRecord& e : epochs) out.push_back(ToJson(e));
  return out;
}

OJson PhasesToJson(const PhaseRecords& phases) {
  OJson out = OJson::object();
  for (const auto& [name, p] : phases) out[name] = ToJson(p);
  return out;
}

Status EpochFromJson(const nlohmann::json& j, EpochRecord* out) {
  return ReadingStatus(ReadEpoch(j, "", out));
}
Status EpochFromJson(const OJson& j, EpochRecord* out) {
  return ReadingStatus(ReadEpoch(j, "", out));
}
Status PhaseFromJson(const nlohmann::json& j, PhaseRecord* out) {
  return ReadingStatus(ReadPhase(j, "", out));
}
Status PhaseFromJson(const OJson& j, PhaseRecord* out) {
  return ReadingStatus(ReadPhase(j, "", out));
}

Status EpochsFromSummary(const nlohmann::json& summary, std::vector<EpochRecord>* out) {
  return ReadEpochs(summary, out);
}
Status EpochsFromSummary(const OJson& summary, std::vector<EpochRecord>* out) {
  return ReadEpochs(summary, out);
}
Status PhasesFromSummary(const nlohmann::json& summary, PhaseRecords* out) {
  return ReadPhases(summary, out);
}
Status PhasesFromSummary(const OJson& summary, PhaseRecords* out) {
  return ReadPhases(summary, out);
}

std::optional<double> Logged(const EpochRecord& e, std::string_view name) {
  for (const auto& [key, value] : e.logs) {
    if (key == name) return value;
  }
  return std::nullopt;
}

std::optional<double> GpuMean(const SpanResources& r, std::optional<double> SpanGpu::*field) {
  double sum = 0;
  int n = 0;
  for (const SpanGpu& g : r.gpus) {
    if (const auto& v = g.*field) sum += *v, ++n;
  }
  return n > 0 ? std::optional<double>(sum / n) : std::nullopt;
}

std::optional<double> GpuSum(const SpanResources& r, std::optional<double> SpanGpu::*field) {
  std::optional<double> sum;
  for (const SpanGpu& g : r.gpus) {
    if (const auto& v = g.*field) sum = sum.value_or(0) + *v;
  }
  return sum;
}

}  // namespace tv

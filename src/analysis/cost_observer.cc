#include "analysis/cost_observer.h"

#include "core/metrics.h"

namespace tv {

CostForecaster::CostForecaster(CostRates rates, nlohmann::ordered_json meta)
    : rates_(std::move(rates)), meta_(std::move(meta)) {}

void CostForecaster::OnRow(Row* row, std::vector<Event>* events) {
  (void)events;
  elapsed_s_ = row->elapsed_s;
  if (start_t_ == 0) start_t_ = row->t - row->elapsed_s;
  for (const GpuRow& g : row->gpus) {
    Gpu& gpu = gpus_[g.index];
    if (auto s = FindStat(metric::kGpuJobProcesses, g.values)) {
      gpu.processes_listed = true;
      gpu.job_processes_max = std::max(gpu.job_processes_max, s->max);
    }
    if (auto s = FindStat(metric::kGpuJobMemoryBytes, g.values))
      gpu.job_memory_max = std::max(gpu.job_memory_max, s->max);
    if (auto s = FindStat(metric::kGpuEnergyJoules, g.values)) gpu.energy_joules = s->last;
  }
  if (auto s = FindStat(metric::kHostCpuEnergyJoules, row->values)) cpu_energy_joules_ = s->last;
}

void CostForecaster::OnSample(const Sample& sample, std::vector<Event>* events) {
  bool ended = false;
  for (const Event& e : *events) {
    if (e.type != "epoch") continue;
    epochs_.push_back(e.fields);
    ended = ended || e.fields.contains("planned_epochs");
  }
  if (!ended || start_t_ == 0) return;
  // The run so far as summary.json would say it, for BuildCost.
  nlohmann::ordered_json summary = {{"duration_s", std::max(elapsed_s_, sample.t - start_t_)}};
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const auto& [index, g] : gpus_) {
    nlohmann::ordered_json j = {{"index", index}};
    if (g.processes_listed) j["job_processes"] = {{"max", g.job_processes_max}};
    j["job_memory_bytes"] = {{"max", g.job_memory_max}};
    if (g.energy_joules) j["energy_joules"] = *g.energy_joules;
    gpus.push_back(std::move(j));
  }
  summary["gpus"] = std::move(gpus);
  if (cpu_energy_joules_) summary["host"] = {{"cpu_energy_joules", *cpu_energy_joules_}};
  summary["epochs"] = epochs_;
  nlohmann::ordered_json cost = BuildCost(summary, meta_, rates_);
  auto forecast = cost.find("forecast");
  if (forecast == cost.end()) return;
  nlohmann::ordered_json fields = *forecast;
  if (cost.contains("currency")) fields["currency"] = cost["currency"];
  events->push_back(Event{sample.t, "cost_forecast", std::move(fields)});
}

}  // namespace tv

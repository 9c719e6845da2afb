#include "store/meta_record.h"

#include <array>
#include <limits>

#include "core/json_read.h"

namespace tv {
namespace {

template <typename J>
MetaRecord From(const J& j) {
  MetaRecord m;
  m.schema_version = static_cast<int>(JsonInt(j, "schema_version").value_or(1));
  m.trainvitals_version = JsonString(j, "trainvitals_version").value_or("");
  m.mode = JsonString(j, "mode").value_or("");
  m.name = JsonString(j, "name").value_or("");
  m.command = JsonStrings(j, "command");
  m.cwd = JsonString(j, "cwd").value_or("");
  m.host = JsonString(j, "host").value_or("");
  m.kernel = JsonString(j, "kernel").value_or("");
  m.pid = JsonInt(j, "pid");
  m.start_t = JsonNumber(j, "start_t");
  m.sample_hz = JsonNumber(j, "sample_hz");
  m.interval_s = JsonNumber(j, "interval_s");
  m.cpus_online = JsonInt(j, "cpus_online");
  if (const J* gpus = JsonAt(j, "gpus"); gpus != nullptr && gpus->is_array()) {
    for (const J& g : *gpus) {
      if (g.is_object()) m.gpus.push_back(GpuInfoFromJson(g));
    }
  }
  auto judge = [&](const char* key) {
    const J* v = JsonAt(j, key);
    return v == nullptr ? nlohmann::ordered_json() : nlohmann::ordered_json(*v);
  };
  m.thresholds = judge("thresholds");
  m.alert_rules = judge("alert_rules");
  m.cost_rates = judge("cost_rates");
  if (const J* d = JsonAt(j, "gpu_driver"); d != nullptr && d->is_object()) {
    m.gpu_driver = GpuDriverFromJson(*d);
  }
  m.prometheus_url = JsonString(j, "prometheus_url").value_or("");
  m.user = JsonString(j, "user").value_or("");
  if (const J* job = JsonAt(j, "job"); job != nullptr && job->is_object()) {
    m.job = JobIdentityFromJson(nlohmann::json(*job));
  }
  return m;
}

// The identity's text fields with their meta.json keys.
template <typename Id>
auto JobFields(Id& job) {
  return std::array{
      std::pair{"id", &job.job},
      std::pair{"kind", &job.kind},
      std::pair{"name", &job.name},
      std::pair{"user", &job.user},
      std::pair{"account", &job.account},
      std::pair{"partition", &job.partition},
      std::pair{"namespace", &job.namespace_name},
      std::pair{"pod", &job.pod},
      std::pair{"container", &job.container},
      std::pair{"cgroup", &job.cgroup},
      std::pair{"allocated_from", &job.allocated_from},
  };
}

template <typename T>
void PutOptional(const std::optional<T>& v, const char* key, nlohmann::ordered_json* out) {
  if (v) (*out)[key] = *v;
}

}  // namespace

nlohmann::ordered_json MetaJson(const MetaRecord& m) {
  nlohmann::ordered_json j = {
      {"schema_version", m.schema_version},
      {"trainvitals_version", m.trainvitals_version},
      {"mode", m.mode},
      {"name", m.name},
      {"command", m.command},
      {"cwd", m.cwd},
      {"host", m.host},
      {"kernel", m.kernel},
  };
  PutOptional(m.pid, "pid", &j);
  PutOptional(m.start_t, "start_t", &j);
  PutOptional(m.sample_hz, "sample_hz", &j);
  PutOptional(m.interval_s, "interval_s", &j);
  PutOptional(m.cpus_online, "cpus_online", &j);
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const GpuInfo& g : m.gpus) gpus.push_back(GpuInfoJson(g));
  j["gpus"] = std::move(gpus);
  if (!m.thresholds.is_null()) j["thresholds"] = m.thresholds;
  if (!m.alert_rules.is_null()) j["alert_rules"] = m.alert_rules;
  if (!m.cost_rates.is_null()) j["cost_rates"] = m.cost_rates;
  if (m.gpu_driver) j["gpu_driver"] = GpuDriverJson(*m.gpu_driver);
  if (!m.prometheus_url.empty()) j["prometheus_url"] = m.prometheus_url;
  if (!m.user.empty()) j["user"] = m.user;
  if (m.job) j["job"] = JobIdentityJson(*m.job);
  return j;
}

nlohmann::ordered_json JobIdentityJson(const JobIdentity& job) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (auto [key, value] : JobFields(job)) {
    if (!value->empty()) j[key] = *value;
  }
  if (!job.allocated_gpus.empty()) j["allocated_gpus"] = job.allocated_gpus;
  PutOptional(job.node_rank, "node_rank", &j);
  return j;
}

JobIdentity JobIdentityFromJson(const nlohmann::json& j) {
  JobIdentity job;
  for (auto [key, value] : JobFields(job)) *value = JsonString(j, key).value_or("");
  job.allocated_gpus = JsonStrings(j, "allocated_gpus");
  if (std::optional<int64_t> rank = JsonInt(j, "node_rank");
      rank && *rank >= 0 && *rank <= std::numeric_limits<int>::max()) {
    job.node_rank = static_cast<int>(*rank);
  }
  return job;
}

MetaRecord MetaFromJson(const nlohmann::json& j) { return From(j); }
MetaRecord MetaFromJson(const nlohmann::ordered_json& j) { return From(j); }

}  // namespace tv

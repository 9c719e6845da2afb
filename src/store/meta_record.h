// MetaRecord: a run's meta.json (docs/schema.md "meta.json") as one typed
// value, with the one way it is written and the one way it is read back.
// `run` fills and writes it when the run starts; `analyze`, `report`,
// `compare`, the run history and the exporters read it. The judges
// (thresholds, alert rules, cost rates) stay JSON here: analysis/judges.h
// types them, as it is the layer that knows the tables they come from.
//
// Reading is lenient: a key absent or of another type leaves its field
// unknown (a reader that must refuse a wrong file checks its shape first,
// core/json_shape.h). Pure data and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu_info.h"
#include "core/job_identity.h"

namespace tv {

struct MetaRecord {
  int schema_version = 1;
  std::string trainvitals_version;
  std::string mode;  // "run", "attach" or "python"
  std::string name;
  std::vector<std::string> command;
  std::string cwd;
  std::string host;
  std::string kernel;
  std::optional<int64_t> pid;  // the root of the monitored tree
  std::optional<double> start_t;
  std::optional<double> sample_hz;
  std::optional<double> interval_s;
  std::optional<int64_t> cpus_online;
  std::vector<GpuInfo> gpus;
  // analysis/judges.h: {key: value}; [{name, expr, ...}]; {pue, ...}. Null
  // when the run did not record them (written before runs kept their judges).
  nlohmann::ordered_json thresholds;
  nlohmann::ordered_json alert_rules;
  nlohmann::ordered_json cost_rates;
  std::optional<GpuDriverInfo> gpu_driver;  // when a GPU driver was loaded
  std::string prometheus_url;               // empty: not served
  // Whose run it is: the account that ran `run` or `attach`, the owner of a
  // job `serve` found. Empty when unknown (written before 0.9).
  std::string user;
  // `serve`: the job on the node this run directory is (its identity as the
  // scheduler and the job's environment gave it). `run`, `attach` and the
  // in-process monitor: the job the training belongs to, the same on every
  // node of a multi-node job (run/run_job.h); none when nothing names one.
  std::optional<JobIdentity> job;
};

// meta.json's "job" object: the identity's non-empty fields ("id", "kind",
// "name", "user", "account", "partition", "namespace", "pod", "container",
// "cgroup", "allocated_from", "allocated_gpus") and "node_rank" when known,
// and back.
nlohmann::ordered_json JobIdentityJson(const JobIdentity& job);
JobIdentity JobIdentityFromJson(const nlohmann::json& j);

// meta.json's object, keys in the order written since 0.1.0.
nlohmann::ordered_json MetaJson(const MetaRecord& m);

// meta.json's object (or null, an empty object: a record of unknowns) read back.
MetaRecord MetaFromJson(const nlohmann::json& j);
MetaRecord MetaFromJson(const nlohmann::ordered_json& j);

}  // namespace tv

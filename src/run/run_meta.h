// meta.json of a run, and what the run is judged with: the findings
// thresholds, the alert rules and the cost rates, loaded from the config before
// the child starts and recorded in meta.json (analysis/judges.h) so that
// `analyze` and `report` reach the run's verdict without its config.
//
// Thread safety: pure, except LoadJudging (reads the config's files) and
// RunMeta (the host's name, kernel and working directory, the job's
// environment).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/alerts/rule.h"
#include "analysis/cost.h"
#include "analysis/findings/table.h"
#include "core/config.h"
#include "store/live_record.h"
#include "store/meta_record.h"

namespace tv {

struct RunJudging {
  Thresholds thresholds;
  // Shared: they outlive every row the sinks hold (rows name them).
  std::shared_ptr<const std::vector<AlertRule>> alert_rules;
  CostRates cost_rates;
};

// Throws ConfigError on a wrong [findings] entry, [[alert]] rule or [cost] rate.
RunJudging LoadJudging(const Config& config);

// meta.json (docs/schema.md): the run (`run`; its "pid" is the job's root),
// the machine, the sampling rates, the GPUs its sources found (as run/sources.h
// RunSources has them), --prometheus's URL (empty: none), the judging, and the
// job the run belongs to (run/run_job.h: --job-id, else the environment of
// `run` or of the attached process, else the launcher's command line).
MetaRecord RunMeta(const LiveIdentity& run, const Config& config, const RunJudging& judging,
                   const std::optional<GpuDriverInfo>& gpu_driver, const std::vector<GpuInfo>& gpus,
                   const std::string& prometheus_url);

}  // namespace tv

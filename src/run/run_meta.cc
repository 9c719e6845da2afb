#include "run/run_meta.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "analysis/alerts/rules_file.h"
#include "analysis/judges.h"
#include "core/host.h"

namespace tv {

RunJudging LoadJudging(const Config& config) {
  RunJudging j;
  j.thresholds = ThresholdsFrom(config.findings);  // a wrong [findings] entry is a setup error
  j.alert_rules = LoadAlertRules(config);          // so is a wrong [[alert]] rule
  j.cost_rates = LoadCostRates(config.cost_file);  // and a wrong [cost] rate
  return j;
}

nlohmann::ordered_json RunMeta(const LiveIdentity& run, const Config& config,
                               const RunJudging& judging, const nlohmann::json& gpu_info,
                               const std::string& prometheus_url) {
  utsname uts{};
  ::uname(&uts);
  std::error_code ec;
  nlohmann::ordered_json meta{
      {"schema_version", 1},
      {"trainvitals_version", TRAINVITALS_VERSION},
      {"mode", run.mode},
      {"name", run.name},
      {"command", run.command},
      {"cwd", std::filesystem::current_path(ec).string()},
      {"host", HostName()},
      {"kernel", fmt::format("{} {}", uts.sysname, uts.release)},
      {"pid", run.job_pid},
      {"start_t", std::round(run.start_t * 1000) / 1000},
      {"sample_hz", config.sample_hz},
      {"interval_s", config.interval_s},
      {"cpus_online", ::sysconf(_SC_NPROCESSORS_ONLN)},
      {"gpus", nlohmann::ordered_json::array()},
      // The judges of the run (analysis/judges.h), so that `analyze` and
      // `report` reach its verdict without being given its config again.
      {"thresholds", ThresholdsJson(judging.thresholds)},
      {"alert_rules",
       AlertRulesJson(judging.alert_rules ? *judging.alert_rules : std::vector<AlertRule>())},
      {"cost_rates", CostRatesJson(judging.cost_rates)},
  };
  if (gpu_info.is_object()) {
    nlohmann::ordered_json driver;
    for (const auto& [key, value] : gpu_info.items()) {
      if (key == "gpus") {
        meta["gpus"] = value;
      } else {
        driver[key] = value;
      }
    }
    meta["gpu_driver"] = driver;
  }
  if (!prometheus_url.empty()) meta["prometheus_url"] = prometheus_url;
  return meta;
}

}  // namespace tv

#include "run/run_meta.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "analysis/alerts/rules_file.h"
#include "analysis/judges.h"
#include "core/host.h"
#include "run/run_job.h"

namespace tv {

RunJudging LoadJudging(const Config& config) {
  RunJudging j;
  j.thresholds = ThresholdsFrom(config.findings);  // a wrong [findings] entry is a setup error
  j.alert_rules = LoadAlertRules(config);          // so is a wrong [[alert]] rule
  j.cost_rates = LoadCostRates(config.cost_file);  // and a wrong [cost] rate
  return j;
}

MetaRecord RunMeta(const LiveIdentity& run, const Config& config, const RunJudging& judging,
                   const std::optional<GpuDriverInfo>& gpu_driver, const std::vector<GpuInfo>& gpus,
                   const std::string& prometheus_url) {
  utsname uts{};
  ::uname(&uts);
  std::error_code ec;
  MetaRecord meta;
  meta.trainvitals_version = TRAINVITALS_VERSION;
  meta.mode = run.mode;
  meta.name = run.name;
  meta.command = run.command;
  meta.cwd = std::filesystem::current_path(ec).string();
  meta.host = HostName();
  meta.kernel = fmt::format("{} {}", uts.sysname, uts.release);
  meta.pid = run.job_pid;
  meta.start_t = std::round(run.start_t * 1000) / 1000;
  meta.sample_hz = config.sample_hz;
  meta.interval_s = config.interval_s;
  meta.cpus_online = ::sysconf(_SC_NPROCESSORS_ONLN);
  meta.gpus = gpus;
  // The judges of the run (analysis/judges.h), so that `analyze` and
  // `report` reach its verdict without being given its config again.
  meta.thresholds = ThresholdsJson(judging.thresholds);
  meta.alert_rules =
      AlertRulesJson(judging.alert_rules ? *judging.alert_rules : std::vector<AlertRule>());
  meta.cost_rates = CostRatesJson(judging.cost_rates);
  meta.gpu_driver = gpu_driver;
  meta.prometheus_url = prometheus_url;
  meta.user = UserNameOf(::geteuid()).value_or("");
  // The job the run belongs to, named alike on every node of the job.
  meta.job = DeriveRunJob({config.job_id, SessionEnviron(run.mode, run.job_pid, Env::Default()),
                           run.command, run.start_t});
  return meta;
}

}  // namespace tv

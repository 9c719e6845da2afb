#include "analysis/alerts/promql.h"

#include <gtest/gtest.h>

#include <fstream>

#include "analysis/alerts/rules_file.h"

namespace tv::promql_test {
namespace {

AlertRule Rule(const std::string& expr) {
  AlertRule r;
  r.name = "r";
  r.expr = ParseAlertExpr(expr);
  return r;
}

TEST(AlertPromql, SaysTheSameConditionOverOurMetricNames) {
  EXPECT_EQ(PromqlOf(Rule("job.memory_util_ratio > 90%")),
            "trainvitals_job_memory_util_ratio > 0.9");
  EXPECT_EQ(PromqlOf(Rule("mean(gpus[].util_ratio[10m]) < 20%")),
            "avg_over_time(trainvitals_gpu_util_ratio[10m]) < 0.2 and on(host, run, gpu) "
            "trainvitals_gpu_job_processes > 0");
  AlertRule all = Rule("max(gpus[].power_watts / gpus[].power_limit_watts[90s]) >= 1");
  all.all_gpus = true;
  EXPECT_EQ(
      PromqlOf(all),
      "max_over_time((trainvitals_gpu_power_watts / trainvitals_gpu_power_limit_watts)[90s:]) "
      ">= 1");
  EXPECT_EQ(PromqlOf(Rule("host.cpu_energy_joules > 1e6")),
            "trainvitals_host_cpu_energy_joules_total > 1000000");
  // What PromQL cannot say the same way is left out.
  EXPECT_EQ(PromqlOf(Rule("max(job.cpu_cores[5 samples]) > 3")), std::nullopt);
  EXPECT_EQ(PromqlOf(Rule("job.memory_bytes_max > 4GiB")), std::nullopt);
}

TEST(AlertPromql, DeployedRulesAreTheBuiltinOnesAsGenerated) {
  std::ifstream in(std::string(TRAINVITALS_SOURCE_DIR) + "/deploy/prometheus/alerts.yml");
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string want = PrometheusRulesYaml(*LoadAlertRules(Config()));
  EXPECT_EQ(file, want) << "deploy/prometheus/alerts.yml is stale: run `make docs`";
  auto rules = LoadAlertRules(Config());
  for (const AlertRule& r : *rules) {
    EXPECT_NE(file.find("- alert: " + r.name + "\n"), std::string::npos) << r.name;
  }
}

}  // namespace
}  // namespace tv::promql_test

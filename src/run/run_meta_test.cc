#include "run/run_meta.h"

#include <gtest/gtest.h>

namespace tv::run_meta_test {
namespace {

LiveIdentity TrainRun() {
  return LiveIdentity{100, 42, "run", "train", {"python", "train.py"}, "/runs/1", 1800000000.1234,
                      1};
}

TEST(RunMeta, SaysTheRunAndItsJudging) {
  RunJudging judging = LoadJudging(Config());
  nlohmann::ordered_json meta = MetaJson(RunMeta(TrainRun(), Config(), judging, {}, {}, ""));
  EXPECT_EQ(meta["mode"], "run");
  EXPECT_EQ(meta["name"], "train");
  EXPECT_EQ(meta["pid"], 42);  // the job's root, not the monitor
  EXPECT_DOUBLE_EQ(meta["start_t"].get<double>(), 1800000000.123);
  EXPECT_EQ(meta["gpus"], nlohmann::ordered_json::array());
  EXPECT_FALSE(meta.contains("gpu_driver"));
  EXPECT_FALSE(meta.contains("prometheus_url"));
  EXPECT_TRUE(meta["thresholds"].is_object());
  EXPECT_EQ(meta["alert_rules"].size(), judging.alert_rules->size());
  EXPECT_TRUE(meta["cost_rates"].is_object());
}

TEST(RunMeta, SplitsTheGpuInfoIntoGpusAndDriver) {
  GpuDriverInfo driver;
  driver.backend = "nvml";
  driver.driver_version = "550.1";
  GpuInfo gpu;
  gpu.name = "H100";
  nlohmann::ordered_json meta = MetaJson(RunMeta(TrainRun(), Config(), LoadJudging(Config()),
                                                 driver, {gpu}, "http://127.0.0.1:9400/metrics"));
  ASSERT_EQ(meta["gpus"].size(), 1u);
  EXPECT_EQ(meta["gpus"][0]["name"], "H100");
  EXPECT_EQ(
      meta["gpu_driver"],
      (nlohmann::ordered_json{{"backend", "nvml"}, {"driver_version", "550.1"}, {"library", ""}}));
  EXPECT_EQ(meta["prometheus_url"], "http://127.0.0.1:9400/metrics");
}

TEST(RunMeta, NamesTheJobGivenWithJobId) {
  Config config;
  config.job_id = "exp-7";
  MetaRecord meta = RunMeta(TrainRun(), config, LoadJudging(config), {}, {}, "");
  ASSERT_TRUE(meta.job.has_value());
  EXPECT_EQ(meta.job->job, "exp-7");
  EXPECT_EQ(meta.job->kind, "given");
  nlohmann::ordered_json j = MetaJson(meta);
  EXPECT_EQ(j["job"]["id"], "exp-7");
  EXPECT_EQ(j["job"]["kind"], "given");
}

}  // namespace
}  // namespace tv::run_meta_test

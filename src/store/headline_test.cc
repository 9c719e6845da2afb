// The headline figures are summary.json's, as the run wrote them.
#include "store/headline.h"

#include <gtest/gtest.h>

#include "store/summary_fixture.h"

namespace tv::headline_test {
namespace {

TEST(Headline, ReadsTheRunsOwnCostAndHealthNotAMeanOverEveryGpu) {
  // GPU 1 was never the job's: its 90 % must not enter the busy share.
  nlohmann::ordered_json summary = nlohmann::ordered_json::parse(R"j({
    "gpus": [{"index": 0, "util_ratio": {"mean": 0.4}, "energy_joules": 900},
             {"index": 1, "util_ratio": {"mean": 0.9}, "energy_joules": 1440}],
    "cost": {"gpus_used": 1, "busy_ratio": 0.4, "busy_basis": "util_ratio",
             "gpu_energy_kwh": 0.00025, "energy_kwh": 0.0003, "money": 0.0125,
             "currency": "EUR"},
    "health": {"score": 76, "breakdown": []}})j");
  RunHeadline h = HeadlineOf(SummaryOfJson(summary));
  EXPECT_EQ(h.gpu_busy_ratio, 0.4);
  EXPECT_EQ(h.busy_basis, "util_ratio");
  EXPECT_EQ(h.gpus_used, 1);
  EXPECT_EQ(h.gpu_energy_kwh, 0.00025);
  EXPECT_EQ(h.energy_kwh, 0.0003);
  EXPECT_EQ(h.money, 0.0125);
  EXPECT_EQ(h.currency, "EUR");
  EXPECT_EQ(h.health_score, 76);
  EXPECT_EQ(h.health_note, "");
}

TEST(Headline, WhatIsMissingOrMistypedStaysUnknown) {
  RunHeadline h = HeadlineOf(SummaryOfJson(nlohmann::ordered_json::parse(R"j({
    "cost": {"busy_ratio": "75 %", "gpus_used": 1e300, "money": null, "currency": "EUR"},
    "health": {"note": "not judged: the run was shorter than its warm-up (30 s)"}})j")));
  EXPECT_FALSE(h.gpu_busy_ratio);
  EXPECT_FALSE(h.gpus_used);
  EXPECT_FALSE(h.money);
  EXPECT_EQ(h.currency, "");  // no money, no currency
  EXPECT_FALSE(h.health_score);
  EXPECT_EQ(h.health_note, "not judged: the run was shorter than its warm-up (30 s)");
  RunHeadline none = HeadlineOf(RunSummary());
  EXPECT_FALSE(none.gpu_energy_kwh);
  EXPECT_FALSE(none.health_score);
}

TEST(Headline, GpuUtilIsOverTheGpusTheJobUsed) {
  nlohmann::ordered_json summary = nlohmann::ordered_json::parse(R"j({
    "gpus": [{"index": 0, "util_ratio": {"mean": 0.4}, "job_processes": {"max": 1},
              "sm_active_ratio": {"mean": 0.3}, "energy_joules": 900},
             {"index": 1, "util_ratio": {"mean": 0.9}, "job_processes": {"max": 0},
              "job_memory_bytes": {"max": 0}},
             {"index": 2, "util_ratio": {"mean": 0.6}, "job_processes": {"max": 0},
              "job_memory_bytes": {"max": 1e9}},
             "not a GPU"]})j");
  RunSummary read = SummaryOfJson(summary);
  EXPECT_DOUBLE_EQ(*HeadlineOf(read).gpu_util_ratio, 0.5);  // GPUs 0 and 2
  std::vector<GpuUse> uses = GpuUsesOf(read.totals);
  ASSERT_EQ(uses.size(), 3u);
  EXPECT_TRUE(uses[0].processes_listed);
  EXPECT_EQ(uses[0].sm_active_ratio_mean, 0.3);
  EXPECT_EQ(uses[0].energy_joules, 900);
  EXPECT_EQ(uses[2].index, 2);
  EXPECT_EQ(uses[2].job_memory_bytes_max, 1e9);
  EXPECT_FALSE(uses[1].energy_joules);
  EXPECT_FALSE(HeadlineOf(RunSummary()).gpu_util_ratio);
}

}  // namespace
}  // namespace tv::headline_test

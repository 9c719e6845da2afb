#include "analysis/alerts/notice.h"

#include <gtest/gtest.h>

#include "actions/actions_test_util.h"

namespace tv::notice_test {
namespace {

using testing_alerts::Context;
using testing_alerts::Notice;
using testing_alerts::Rule;

TEST(NoticeJson, FiringCarriesEveryFieldInBaseUnits) {
  AlertRule rule = Rule("gpu-low-util");
  nlohmann::ordered_json j =
      NoticeJson(Notice(rule, AlertNotice::State::kFiring, 0), Context("/runs/r"));
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"name", "state", "severity", "gpu", "value",
                                            "threshold", "expr", "summary", "labels", "starts_at",
                                            "ends_at", "resolved_by", "run", "host", "text"}));
  EXPECT_EQ(j["name"], "gpu-low-util");
  EXPECT_EQ(j["state"], "firing");
  EXPECT_EQ(j["severity"], "warning");
  EXPECT_EQ(j["gpu"], 0);
  EXPECT_DOUBLE_EQ(j["value"].get<double>(), 0.125);
  EXPECT_DOUBLE_EQ(j["threshold"].get<double>(), 0.2);
  EXPECT_EQ(j["expr"], "gpus[].util_ratio < 20%");
  EXPECT_EQ(j["labels"], nlohmann::ordered_json({{"team", "vision"}}));
  EXPECT_DOUBLE_EQ(j["starts_at"].get<double>(), 1764529200.5);
  EXPECT_TRUE(j["ends_at"].is_null());
  EXPECT_TRUE(j["resolved_by"].is_null());
  EXPECT_EQ(j["run"], "resnet-42");
  EXPECT_EQ(j["host"], "node7");
  EXPECT_EQ(j["text"], "[FIRING] gpu-low-util (GPU 0) on node7/resnet-42: GPU 0 under 20 %");
}

TEST(NoticeJson, ResolvedHasItsEndAndNoGpuIsNull) {
  AlertRule rule = Rule("job-memory-near-limit");
  rule.expr.per_gpu = false;
  nlohmann::ordered_json j = NoticeJson(
      Notice(rule, AlertNotice::State::kResolved, -1, "job memory util 85%, back under 90%"),
      Context(""));
  EXPECT_EQ(j["state"], "resolved");
  EXPECT_TRUE(j["gpu"].is_null());
  EXPECT_DOUBLE_EQ(j["ends_at"].get<double>(), 1764529260.25);
  EXPECT_EQ(j["resolved_by"], "condition");
  EXPECT_EQ(j["text"],
            "[RESOLVED] job-memory-near-limit on node7/resnet-42: job memory util 85%, back under "
            "90%");
}

TEST(NoticeJson, ResolvedByTheRunsEndSaysSo) {
  AlertRule rule = Rule("job-mem-high");
  rule.expr.per_gpu = false;
  AlertNotice notice = Notice(rule, AlertNotice::State::kResolved, -1,
                              "the run ended (job memory was 700 MiB over 600 MiB)");
  notice.run_ended = true;
  nlohmann::ordered_json j = NoticeJson(notice, Context(""));
  EXPECT_EQ(j["resolved_by"], "run_end");
  EXPECT_EQ(j["summary"], "the run ended (job memory was 700 MiB over 600 MiB)");
  EXPECT_EQ(j["text"],
            "[RESOLVED] job-mem-high on node7/resnet-42: the run ended (job memory was 700 MiB "
            "over 600 MiB)");
}

TEST(NoticeJson, FindingRuleHasNoValueNorThreshold) {
  AlertRule rule = Rule("leak");
  rule.expr.finding = "gpu-memory-leak";
  rule.expr.text = "finding gpu-memory-leak";
  AlertNotice notice = Notice(rule, AlertNotice::State::kRepeat, 1, "");
  notice.value.reset();
  nlohmann::ordered_json j = NoticeJson(notice, Context(""));
  EXPECT_EQ(j["state"], "repeat");
  EXPECT_TRUE(j["value"].is_null());
  EXPECT_TRUE(j["threshold"].is_null());
  // No summary: the expression says what holds.
  EXPECT_EQ(j["text"], "[STILL FIRING] leak (GPU 1) on node7/resnet-42: finding gpu-memory-leak");
}

TEST(StateName, NamesEachState) {
  EXPECT_EQ(StateName(AlertNotice::State::kFiring), "firing");
  EXPECT_EQ(StateName(AlertNotice::State::kRepeat), "repeat");
  EXPECT_EQ(StateName(AlertNotice::State::kResolved), "resolved");
}

}  // namespace
}  // namespace tv::notice_test

// A session's announcement for `top` is written and read back through one
// record; a file that is not one is refused, a wrong key is named.
#include "store/live_record.h"

#include <gtest/gtest.h>

#include "core/metrics.h"

namespace tv::live_record_test {
namespace {

TEST(LiveRecord, IsWrittenHeadFirstThenItsLiveStateAndReadBack) {
  LiveIdentity id{4242, 4243, "run", "tiny", {"python", "train.py"}, "/runs/x", 1799999990, 0.5};
  Row row;
  row.health_score = 71.25;
  row.findings = {{"input-bound", "warning", true}, {"cpu-bound", "info", false}};
  row.alerts = {{"gpu \"idle\"", "critical", 1, true}, {"slow", "info", -1, false}};
  std::string text = LiveHeadText(id);
  AppendLiveState(row, &text);
  text += R"({"t":1800000000.5,"job":{"cpu_cores":1.5,"memory_bytes":1048576},)"
          R"("training":{"epoch":3,"step":900,"steps_per_second":12.5,"steps_per_second_max":13}})";
  text += "}";
  EXPECT_TRUE(
      text.starts_with(R"({"version":1,"pid":4242,"job_pid":4243,"mode":"run","name":"tiny",)"))
      << text;

  LiveRecord r;
  ASSERT_TRUE(LiveFromJson(nlohmann::json::parse(text), &r).ok()) << text;
  EXPECT_EQ(r.identity.pid, 4242);
  EXPECT_EQ(r.identity.job_pid, 4243);
  EXPECT_EQ(r.identity.command, id.command);
  EXPECT_EQ(r.identity.interval_s, 0.5);
  EXPECT_EQ(r.health_score, 71.25);
  ASSERT_EQ(r.findings.size(), 1u);  // the open ones
  EXPECT_EQ(r.findings[0].id, "input-bound");
  EXPECT_EQ(r.findings[0].severity, Severity::kWarning);
  ASSERT_EQ(r.alerts.size(), 1u);  // the firing ones
  EXPECT_EQ(r.alerts[0].name, "gpu \"idle\"");
  EXPECT_EQ(r.alerts[0].gpu, 1);
  EXPECT_EQ(r.row_t, 1800000000.5);
  EXPECT_EQ(r.row.run.Value(metric::kTrainingEpoch), 3);
  EXPECT_EQ(r.row.run.Value(metric::kTrainingStepsPerSecond), 12.5);
  EXPECT_EQ(r.row.run.Max(metric::kTrainingStepsPerSecond), 13);
  EXPECT_EQ(r.row.run.Value(metric::kJobMemoryBytes), 1048576);
  EXPECT_FALSE(r.row.run.Has(metric::kJobRssBytes));
}

TEST(LiveRecord, WithoutAWholePidItIsNoSessionAWrongKeyIsNamed) {
  LiveRecord r;
  EXPECT_FALSE(LiveFromJson(nlohmann::json::parse(R"({"pid": "12"})"), &r).ok());
  EXPECT_FALSE(LiveFromJson(nlohmann::json::parse("[1]"), &r).ok());
  EXPECT_FALSE(LiveFromJson(nlohmann::json(), &r).ok());
  EXPECT_EQ(r.identity.pid, 0);
  Status s = LiveFromJson(nlohmann::json::parse(R"({"pid": 12, "health_score": null,
    "findings": [{"id": "x", "severity": "fatal"}], "row": {"training": {"step": "many"}}})"),
                          &r);
  EXPECT_EQ(r.identity.pid, 12);
  EXPECT_FALSE(r.health_score);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(s.message(), "row: key training.step: expected a number, got a string");

  Row nothing;  // no score yet
  std::string text = LiveHeadText(LiveIdentity{.pid = 7});
  AppendLiveState(nothing, &text);
  EXPECT_NE(text.find(R"("health_score":null,"findings":[],"alerts":[],"row":)"),
            std::string::npos);
}

}  // namespace
}  // namespace tv::live_record_test

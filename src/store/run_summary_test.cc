#include "store/run_summary.h"

#include <gtest/gtest.h>

#include "core/aggregator.h"
#include "store/run_v1_fixture.h"

namespace tv::run_summary_test {
namespace {

using Json = nlohmann::ordered_json;

std::vector<std::string> Keys(const Json& j) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  return keys;
}

TEST(RunSummary, ARunWrittenByTheFirstVersionReadsBackByteForByte) {
  Json written = RunV1Json("summary.json");
  RunSummary s;
  ASSERT_TRUE(RunSummaryFromJson(written, &s).ok());
  EXPECT_EQ(RunSummaryJson(s).dump(2), written.dump(2));
  // Read, the parts are there.
  EXPECT_FALSE(s.epochs.empty());
  EXPECT_TRUE(s.health);
  EXPECT_TRUE(s.memory_trends);
  EXPECT_TRUE(s.alerts);
  EXPECT_TRUE(s.cost);
  EXPECT_TRUE(s.processes.leaked);
}

TEST(RunSummary, KeysComeInTheOrderSummaryJsonHasAlwaysHadThem) {
  RunSummary s;
  s.outcome.command = {"python", "train.py"};
  s.rows_unwritten = 3;
  s.jsonl_error = "No space left on device";
  s.health = HealthRecord{};
  s.memory_trends.emplace();
  s.alerts.emplace();
  s.cost = CostRecord{};
  s.processes.top = TopProcesses{};
  s.processes.exception = ExceptionRecord{.type = "ValueError"};
  EXPECT_EQ(
      Keys(RunSummaryJson(s)),
      (std::vector<std::string>{
          "schema_version", "command",     "run_dir", "start_t",       "end_t",        "duration_s",
          "exit_code",      "exit_signal", "samples", "rows",          "rows_dropped", "late_ticks",
          "host",           "job",         "gpus",    "epochs",        "phases",       "findings",
          "rows_unwritten", "jsonl_error", "health",  "memory_trends", "alerts",       "cost",
          "processes",      "exception"}));
  // A run neither judged nor costed: the parts it has.
  EXPECT_EQ(Keys(RunSummaryJson(RunSummary())),
            (std::vector<std::string>{"schema_version", "command", "run_dir", "start_t", "end_t",
                                      "duration_s", "exit_code", "exit_signal", "samples", "rows",
                                      "rows_dropped", "late_ticks", "host", "job", "gpus", "epochs",
                                      "phases", "findings"}));
}

TEST(RunSummary, TheRunsOwnSummaryHoldsWhatItsFileWillHold) {
  Aggregator agg;
  Sample sample;
  sample.job.cpu_cores = 1.0 / 3;
  sample.job.processes = 3;
  agg.Add(sample);
  RunOutcome outcome;
  outcome.start_t = 100.00049;
  outcome.end_t = 112.5;
  RunSummary s = SummaryOf(outcome, agg.Peek(112.5, 12.5));
  RunSummary read;
  ASSERT_TRUE(RunSummaryFromJson(RunSummaryJson(s), &read).ok());
  EXPECT_EQ(s.outcome.start_t, read.outcome.start_t);
  EXPECT_EQ(s.outcome.duration_s, read.outcome.duration_s);
  EXPECT_EQ(*s.outcome.duration_s, 12.5);
  EXPECT_EQ(s.outcome.samples, 1u);
  EXPECT_EQ(s.totals.run.Value(metric::kJobCpuCores), 0.3333);
  EXPECT_EQ(s.totals.run.Value(metric::kJobCpuCores), read.totals.run.Value(metric::kJobCpuCores));
  EXPECT_EQ(s.totals.run.Max(metric::kJobProcesses), 3);
}

TEST(RunSummary, EpochsOfAnotherShapeAreRefusedTheRestIsReadLeniently) {
  Json j = RunV1Json("summary.json");
  j["epochs"][1]["steps"] = "many";
  RunSummary s;
  Status read = RunSummaryFromJson(j, &s);
  EXPECT_EQ(read.message(), "key epochs[1].steps: expected a whole number, got a string");

  Json k = RunV1Json("summary.json");
  k["duration_s"] = "soon";
  k["health"]["score"] = "good";
  k["cost"]["busy_ratio"] = "50 %";
  ASSERT_TRUE(RunSummaryFromJson(k, &s).ok());
  EXPECT_FALSE(s.outcome.duration_s);
  ASSERT_TRUE(s.health);
  EXPECT_FALSE(s.health->score);
  ASSERT_TRUE(s.cost);
  EXPECT_FALSE(s.cost->busy_ratio);
  EXPECT_TRUE(s.cost->gpu_hours);

  EXPECT_EQ(RunSummaryFromJson(Json::array(), &s).message(), "the summary is not a JSON object");
}

}  // namespace
}  // namespace tv::run_summary_test

// How a run went goes into summary.json as it always has and comes back
// typed; what is mistyped stays unknown and is named.
#include "store/run_outcome.h"

#include <gtest/gtest.h>

#include "store/run_v1_fixture.h"

namespace tv::run_outcome_test {
namespace {

TEST(RunOutcome, IsWrittenAsSummaryJsonOpensAndReadBack) {
  RunOutcome o;
  o.command = {"python", "train.py", "--lr", "1e-3"};
  o.run_dir = "runs/20261202-101500-train";
  o.start_t = 1796200000.12345;
  o.end_t = 1796200090.5;
  o.exit_code = 137;
  o.exit_signal = 9;
  o.samples = 905;
  o.rows_written = 90;
  o.late_ticks = 2;
  nlohmann::ordered_json j;
  PutOutcome(o, &j);
  EXPECT_EQ(j.dump(), R"({"schema_version":1,"command":["python","train.py","--lr","1e-3"],)"
                      R"("run_dir":"runs/20261202-101500-train","start_t":1796200000.123,)"
                      R"("end_t":1796200090.5,"duration_s":90.377,"exit_code":137,"exit_signal":9,)"
                      R"("samples":905,"rows":90,"rows_dropped":0,"late_ticks":2})");
  RunOutcome back;
  ASSERT_TRUE(OutcomeFromSummary(nlohmann::json::parse(j.dump()), &back).ok());
  EXPECT_EQ(back.command, o.command);
  EXPECT_EQ(back.run_dir, o.run_dir);
  EXPECT_EQ(back.start_t, 1796200000.123);
  EXPECT_EQ(back.duration_s, 90.377);
  EXPECT_EQ(back.exit_code, 137);
  EXPECT_EQ(back.exit_signal, 9);
  EXPECT_EQ(back.samples, 905u);
  EXPECT_EQ(back.rows_written, 90u);
  EXPECT_EQ(back.late_ticks, 2u);
}

TEST(RunOutcome, AnAttachedRunHasNoExitCode) {
  nlohmann::ordered_json j;
  PutOutcome(RunOutcome{.start_t = 10, .end_t = 12}, &j);
  EXPECT_TRUE(j["exit_code"].is_null());
  EXPECT_TRUE(j["exit_signal"].is_null());
  RunOutcome back;
  ASSERT_TRUE(OutcomeFromSummary(j, &back).ok());
  EXPECT_FALSE(back.exit_code);
  EXPECT_EQ(back.duration_s, 2);
}

// What is costed from a summary before it is written and what is costed from
// the file must be one duration: the one its written times say.
TEST(RunOutcome, TheDurationIsTheWrittenTimesOwnAndWritingTwiceKeepsIt) {
  RunOutcome o{.start_t = 1796200000.0004, .end_t = 1796200003.4756};  // 3.4752 apart
  RunOutcome once = AsWritten(o);
  EXPECT_EQ(*once.start_t, 1796200000.0);
  EXPECT_EQ(*once.end_t, 1796200003.476);
  EXPECT_EQ(*once.duration_s, 3.476);
  nlohmann::ordered_json j;
  PutOutcome(once, &j);
  RunOutcome back;
  ASSERT_TRUE(OutcomeFromSummary(j, &back).ok());
  EXPECT_EQ(back.duration_s, once.duration_s);
  EXPECT_EQ(AsWritten(once).duration_s, once.duration_s);
}

TEST(RunOutcome, AMistypedKeyIsUnknownAndNamedTheRestIsRead) {
  RunOutcome o;
  Status s = OutcomeFromSummary(nlohmann::json::parse(R"j({
    "command": "python train.py", "run_dir": "r", "duration_s": 12.5,
    "exit_code": 1e300, "exit_signal": 2.5, "rows": -3})j"),
                                &o);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "key command: expected an array, got a string");
  EXPECT_TRUE(o.command.empty());
  EXPECT_EQ(o.run_dir, "r");
  EXPECT_EQ(o.duration_s, 12.5);
  EXPECT_FALSE(o.exit_code);    // no int
  EXPECT_FALSE(o.exit_signal);  // no whole number
  EXPECT_EQ(o.rows_written, 0u);
  EXPECT_FALSE(OutcomeFromSummary(nlohmann::json(3), &o).ok());
}

// How a run written by 0.1.0 went, read and written back in its place, is
// the file.
TEST(RunOutcome, OfASummaryWrittenBy010WrittenBackIsTheFile) {
  std::string text = RunV1Text("summary.json");
  nlohmann::ordered_json summary = nlohmann::ordered_json::parse(text);
  RunOutcome o;
  ASSERT_TRUE(OutcomeFromSummary(summary, &o).ok());
  EXPECT_FALSE(o.command.empty());
  EXPECT_TRUE(o.duration_s);
  PutOutcome(o, &summary);
  EXPECT_EQ(summary.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n",
            text);
}

}  // namespace
}  // namespace tv::run_outcome_test

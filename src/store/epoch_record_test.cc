#include "store/epoch_record.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "store/run_v1_fixture.h"

namespace tv::epoch_record_test {
namespace {

using OJson = nlohmann::ordered_json;

std::string Dump(const OJson& j) { return j.dump(-1, ' ', false, OJson::error_handler_t::replace); }

TEST(EpochRecord, SummaryEpochsOfVersion1ReadAndWriteBackByteForByte) {
  OJson summary = OJson::parse(RunV1Text("summary.json"));
  ASSERT_EQ(summary["epochs"].size(), 3u);
  for (const OJson& original : summary["epochs"]) {
    EpochRecord e;
    Status s = EpochFromJson(original, &e);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(Dump(ToJson(e)), Dump(original));
  }
  std::vector<EpochRecord> epochs;
  ASSERT_TRUE(EpochsFromSummary(summary, &epochs).ok());
  ASSERT_EQ(epochs.size(), 3u);
  EXPECT_EQ(epochs[1].epoch, 1);
  EXPECT_EQ(epochs[0].planned_epochs, 6);
  ASSERT_EQ(epochs[0].resources.gpus.size(), 2u);
  EXPECT_DOUBLE_EQ(*epochs[0].resources.gpus[1].energy_joules, 718.4);
  EXPECT_EQ(Dump(EpochsToJson(epochs)), Dump(summary["epochs"]));
}

TEST(EpochRecord, SummaryPhasesOfVersion1ReadAndWriteBackByteForByte) {
  OJson summary = OJson::parse(RunV1Text("summary.json"));
  ASSERT_EQ(summary["phases"].size(), 2u);
  for (const auto& [name, original] : summary["phases"].items()) {
    PhaseRecord p;
    Status s = PhaseFromJson(original, &p);
    ASSERT_TRUE(s.ok()) << name << ": " << s.message();
    EXPECT_EQ(Dump(ToJson(p)), Dump(original)) << name;
  }
  PhaseRecords phases;
  ASSERT_TRUE(PhasesFromSummary(summary, &phases).ok());
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].first, "train");
  EXPECT_FALSE(phases[1].second.resources.data_wait_ratio);  // eval: not measured, not 0
  EXPECT_EQ(Dump(PhasesToJson(phases)), Dump(summary["phases"]));
}

// The whole summary.json, its epochs and phases replaced by the records'
// JSON and written as trainvitals writes it, is the file.
TEST(EpochRecord, SummaryWithRecordsWrittenBackIsTheFile) {
  std::string text = RunV1Text("summary.json");
  OJson summary = OJson::parse(text);
  std::vector<EpochRecord> epochs;
  PhaseRecords phases;
  ASSERT_TRUE(EpochsFromSummary(summary, &epochs).ok());
  ASSERT_TRUE(PhasesFromSummary(summary, &phases).ok());
  summary["epochs"] = EpochsToJson(epochs);
  summary["phases"] = PhasesToJson(phases);
  EXPECT_EQ(summary.dump(2, ' ', false, OJson::error_handler_t::replace) + "\n", text);
}

// Each `epoch` line of events.jsonl, its record written back after "t" and
// "type" as the events file writes them, is the line.
TEST(EpochRecord, EpochEventsOfVersion1ReadAndWriteBackByteForByte) {
  std::istringstream lines(RunV1Text("events.jsonl"));
  std::string line;
  int seen = 0;
  while (std::getline(lines, line)) {
    OJson event = OJson::parse(line);
    if (event["type"] != "epoch") continue;
    ++seen;
    EpochRecord e;
    Status s = EpochFromJson(event, &e);  // "t" and "type" are not the record's
    ASSERT_TRUE(s.ok()) << s.message();
    OJson back = {{"t", event["t"]}, {"type", "epoch"}};
    OJson fields = ToJson(e);
    for (const auto& [k, v] : fields.items()) back[k] = v;
    EXPECT_EQ(Dump(back), line);
  }
  EXPECT_EQ(seen, 3);
}

TEST(EpochRecord, AWrongKeyIsNamedWithWhatItShouldHold) {
  EpochRecord e;
  Status s = EpochFromJson(OJson::parse(R"({"epoch": 1, "duration_s": "long"})"), &e);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalid);
  EXPECT_EQ(s.message(), "key duration_s: expected a number, got a string");

  s = EpochFromJson(OJson::parse(R"({"epoch": 1.5})"), &e);
  EXPECT_EQ(s.message(), "key epoch: expected a whole number, got 1.5");
  s = EpochFromJson(OJson::parse(R"({"logs": {"loss": "low"}})"), &e);
  EXPECT_EQ(s.message(), "key logs.loss: expected a number or null, got a string");
  s = EpochFromJson(OJson::parse("[]"), &e);
  EXPECT_EQ(s.message(), "expected an object, got an array");

  std::vector<EpochRecord> epochs;
  s = EpochsFromSummary(
      OJson::parse(R"({"epochs": [{"epoch": 0}, {"epoch": 1, "gpus": [{"index": "0"}]}]})"),
      &epochs);
  EXPECT_EQ(s.message(), "key epochs[1].gpus[0].index: expected a whole number, got a string");
  s = EpochsFromSummary(OJson::parse(R"({"epochs": {}})"), &epochs);
  EXPECT_EQ(s.message(), "key epochs: expected an array, got an object");

  PhaseRecords phases;
  s = PhasesFromSummary(OJson::parse(R"({"phases": {"eval": {"count": true}}})"), &phases);
  EXPECT_EQ(s.message(), "key phases.eval.count: expected a whole number, got a boolean");
}

TEST(EpochRecord, AbsentKeysStayAbsentAndANullLossIsNull) {
  EpochRecord e;
  ASSERT_TRUE(EpochFromJson(OJson::parse(R"({"epoch": 2, "logs": {"loss": null}})"), &e).ok());
  EXPECT_TRUE(e.complete);
  EXPECT_FALSE(e.call);
  EXPECT_FALSE(e.resources.data_wait_ratio);
  ASSERT_EQ(e.logs.size(), 1u);
  EXPECT_FALSE(Logged(e, "loss"));
  EXPECT_EQ(Dump(ToJson(e)),
            R"({"epoch":2,"start_t":0.0,"duration_s":0.0,"steps":0,"logs":{"loss":null}})");
  std::vector<EpochRecord> none;
  EXPECT_TRUE(EpochsFromSummary(OJson::object(), &none).ok());
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace tv::epoch_record_test

#include "store/alert_record.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "store/run_v1_fixture.h"

namespace tv::alert_record_test {
namespace {

using Json = nlohmann::ordered_json;

// An event as events.jsonl writes it: t, type, then its further keys.
Json LineOf(const Event& e) {
  Json line = {{"t", e.t}, {"type", EventTypeName(e.type)}};
  line.update(e.fields);
  return line;
}

// `text` (one line of events.jsonl) read into a Record and written back.
template <typename Record>
std::string ReadBack(const std::string& text) {
  Record r;
  Status read = AlertFromEventLine(Json::parse(text), &r);
  EXPECT_TRUE(read.ok()) << read.message();
  return LineOf(AlertEvent(r)).dump();
}

TEST(AlertRecord, TheAlertsOfASummaryReadBackByteForByte) {
  Json summary = Json::parse(RunV1Text("summary.json"));
  const Json& alerts = summary["alerts"];
  ASSERT_EQ(alerts.size(), 1u);
  for (const Json& original : alerts) {
    AlertRecord a;
    Status read = AlertFromJson(original, &a);
    ASSERT_TRUE(read.ok()) << read.message();
    EXPECT_EQ(AlertJson(a).dump(), original.dump());
  }
  std::vector<AlertRecord> all;
  ASSERT_TRUE(AlertsFromSummary(summary, &all).ok());
  EXPECT_EQ(AlertsJson(all).dump(), alerts.dump());
  Json written = Json::object();
  SetSummaryAlerts(all, &written);
  EXPECT_EQ(written["alerts"].dump(), alerts.dump());
}

TEST(AlertRecord, TheAlertEventsOfARunReadBackByteForByte) {
  std::istringstream lines(RunV1Text("events.jsonl"));
  std::vector<std::string> types;
  for (std::string line; std::getline(lines, line);) {
    Json original = Json::parse(line);
    std::string type = original["type"];
    if (!type.starts_with("alert_")) continue;
    types.push_back(type);
    EXPECT_EQ(ReadBack<AlertEventRecord>(line), original.dump());
  }
  EXPECT_EQ(types, (std::vector<std::string>{"alert_firing", "alert_resolved"}));
}

TEST(AlertRecord, TheActionEventsReadBackByteForByte) {
  // As the actions write them (actions/actions.cc).
  const char* action =
      R"({"t":1796176917.25,"type":"alert_action","alert":"oom-risk","action":"signal","signal":"SIGUSR1","pid":4121})";
  EXPECT_EQ(ReadBack<AlertActionRecord>(action), Json::parse(action).dump());
  const char* failed =
      R"({"t":1796176917.5,"type":"alert_action_failed","alert":"gpu-low-util","action":"webhook","message":"HTTP 500"})";
  EXPECT_EQ(ReadBack<AlertActionFailedRecord>(failed), Json::parse(failed).dump());
  const char* lost =
      R"({"t":1796176921.2,"type":"alert_notices_lost","count":3,"actions":[{"alert":"gpu-low-util","action":"webhook","count":3,"failed":1,"queue_full":0,"run_ended":2}]})";
  EXPECT_EQ(ReadBack<AlertNoticesLostRecord>(lost), Json::parse(lost).dump());
}

TEST(AlertRecord, ReadsTheTypedFields) {
  Json j = Json::parse(R"({"t":10.5,"type":"alert_resolved","alert":"gpu-low-util",
      "severity":"critical","gpu":1,"value":12.0,"threshold":20.0,"expr":"gpus[].util_ratio < 20%",
      "summary":"s","starts_at":4.25,"firing_s":6.3,"resolved_by":"run_end"})");
  AlertEventRecord r;
  ASSERT_TRUE(AlertFromEventLine(j, &r).ok());
  EXPECT_TRUE(r.resolved);
  EXPECT_EQ(r.t, 10.5);
  EXPECT_EQ(r.severity, Severity::kCritical);
  EXPECT_EQ(r.gpu, 1);
  EXPECT_EQ(r.value, 12.0);
  EXPECT_EQ(r.starts_at, 4.25);
  EXPECT_EQ(r.firing_s, 6.3);
  EXPECT_EQ(r.resolved_by, AlertResolvedBy::kRunEnd);
  AlertEventRecord again;
  ASSERT_TRUE(AlertFromEvent(AlertEvent(r), &again).ok());
  EXPECT_EQ(again, r);
}

TEST(AlertRecord, AnAbsentKeyTakesItsDefault) {
  // An older run's event without its summary, severity or start.
  AlertEventRecord r;
  Event e{.t = 3, .type = EventType::kAlertResolved, .fields = {{"alert", "r"}, {"firing_s", 2.0}}};
  ASSERT_TRUE(AlertFromEvent(e, &r).ok());
  EXPECT_EQ(r.alert, "r");
  EXPECT_EQ(r.severity, Severity::kWarning);
  EXPECT_EQ(r.gpu, std::nullopt);
  EXPECT_EQ(r.summary, "");
  EXPECT_EQ(r.firing_s, 2.0);
  AlertNoticesLostRecord lost;
  e = {.t = 4,
       .type = EventType::kAlertNoticesLost,
       .fields = {{"count", 1}, {"actions", {{{"alert", "r"}, {"run_ended", 1}}}}}};
  ASSERT_TRUE(AlertFromEvent(e, &lost).ok());
  ASSERT_EQ(lost.actions.size(), 1u);
  EXPECT_EQ(lost.actions[0].failed, 0);
  EXPECT_EQ(lost.actions[0].run_ended, 1);
}

// The error names the key and what it expected.
std::string ErrorOf(const char* text) {
  AlertRecord r;
  Status s = AlertFromJson(Json::parse(text), &r);
  EXPECT_FALSE(s.ok()) << text;
  return s.message();
}

TEST(AlertRecord, AWrongKeyIsNamedWithWhatWasExpected) {
  EXPECT_EQ(ErrorOf(R"({"alert":1})"), "key alert: expected a string, got a number");
  EXPECT_EQ(ErrorOf(R"({"alert":"a","severity":"fatal"})"),
            R"(key severity: expected info, warning or critical, got "fatal")");
  EXPECT_EQ(ErrorOf(R"({"alert":"a","gpu":1.5})"), "key gpu: expected a whole number, got 1.5");
  EXPECT_EQ(ErrorOf(R"({"alert":"a","times_fired":"twice"})"),
            "key times_fired: expected a whole number, got a string");
  EXPECT_EQ(ErrorOf(R"({"alert":"a","firing_s":null})"),
            "key firing_s: expected a number, got null");
  EXPECT_EQ(ErrorOf("[]"), "expected an object, got an array");
}

TEST(AlertRecord, AWrongElementOfTheSummaryIsNamed) {
  std::vector<AlertRecord> out;
  Status s = AlertsFromSummary(
      Json::parse(R"({"alerts":[{"alert":"a"},{"alert":"b","worst_value":"high"}]})"), &out);
  EXPECT_EQ(s.message(), "key alerts[1].worst_value: expected a number, got a string");
  EXPECT_EQ(out.size(), 1u);
  EXPECT_TRUE(AlertsFromSummary(Json::parse(R"({"alerts":null})"), &out).ok());
  EXPECT_TRUE(out.empty());
}

TEST(AlertRecord, AWrongKeyOfAnEventIsNamed) {
  AlertEventRecord r;
  Status s = AlertFromEventLine(
      Json::parse(R"({"t":1,"type":"alert_resolved","alert":"a","resolved_by":"timeout"})"), &r);
  EXPECT_EQ(s.message(), R"(key resolved_by: expected condition or run_end, got "timeout")");
  AlertNoticesLostRecord lost;
  s = AlertFromEventLine(
      Json::parse(R"({"t":1,"type":"alert_notices_lost","actions":[{"count":2},{"failed":"x"}]})"),
      &lost);
  EXPECT_EQ(s.message(), "key actions[1].failed: expected a whole number, got a string");
  s = AlertFromEventLine(Json::parse(R"({"t":"now","type":"alert_firing"})"), &r);
  EXPECT_EQ(s.message(), "key t: expected a number, got a string");
}

TEST(AlertRecord, AnEventOfAnotherTypeIsRefused) {
  AlertEventRecord r;
  Status s = AlertFromEventLine(Json::parse(R"({"t":1,"type":"start"})"), &r);
  EXPECT_EQ(s.message(), "key type: expected alert_firing or alert_resolved");
  AlertActionFailedRecord failed;
  s = AlertFromEvent(Event{.t = 1, .type = EventType::kAlertAction}, &failed);
  EXPECT_EQ(s.message(), "key type: expected alert_action_failed");
}

}  // namespace
}  // namespace tv::alert_record_test

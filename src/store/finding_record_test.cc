#include "store/finding_record.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "store/run_v1_fixture.h"

namespace tv::finding_record_test {
namespace {

using Json = nlohmann::ordered_json;

TEST(FindingRecord, EveryFindingOfASummaryReadsBackByteForByte) {
  Json summary = Json::parse(RunV1Text("summary.json"));
  const Json& findings = summary["findings"];
  ASSERT_EQ(findings.size(), 2u);
  for (const Json& original : findings) {
    FindingRecord r;
    Status read = FindingFromJson(original, &r);
    ASSERT_TRUE(read.ok()) << read.message();
    EXPECT_EQ(FindingJson(r).dump(), original.dump());
  }
  std::vector<FindingRecord> all;
  ASSERT_TRUE(FindingsFromJson(findings, &all).ok());
  EXPECT_EQ(FindingsJson(all).dump(), findings.dump());
}

TEST(FindingRecord, EveryFindingEventReadsBackByteForByte) {
  std::istringstream lines(RunV1Text("events.jsonl"));
  size_t events = 0;
  for (std::string line; std::getline(lines, line);) {
    Json original = Json::parse(line);
    std::string type = original["type"];
    if (type != "finding_open" && type != "finding_close") continue;
    ++events;
    FindingRecord r;
    Status read = FindingFromEvent(original, &r);
    ASSERT_TRUE(read.ok()) << read.message();
    EventType event_type = *ParseEventType(type);
    Json back = {{"t", event_type == EventType::kFindingOpen ? r.opened_t : *r.closed_t},
                 {"type", type}};
    back.update(FindingEventFields(event_type, r));
    EXPECT_EQ(back.dump(), original.dump());
  }
  EXPECT_EQ(events, 2u);
}

TEST(FindingRecord, ReadsTheTypedFields) {
  Json j = Json::parse(R"({"id":"oom","severity":"critical","opened_t":10.5,"closed_t":12.0,
      "duration_s":1.5,"subject":{"rank":1,"pid":412},
      "evidence":{"killed_by":"exception","epoch":3,"ratio":0.25,"memory":[{"t":1}]},
      "message":"m","advice":["a","b"]})");
  FindingRecord r;
  ASSERT_TRUE(FindingFromJson(j, &r).ok());
  EXPECT_EQ(r.severity, Severity::kCritical);
  EXPECT_EQ(r.closed_t, 12);
  EXPECT_EQ(r.subject, FindingSubject::Process(1, 412));
  EXPECT_EQ(SubjectWords(r.subject), "rank 1");
  ASSERT_NE(r.evidence.Find("killed_by"), nullptr);
  EXPECT_EQ(*r.evidence.Find("killed_by")->text(), "exception");
  EXPECT_EQ(r.evidence.Find("epoch")->number(), 3);
  EXPECT_EQ(r.evidence.Find("ratio")->number(), 0.25);
  EXPECT_EQ(r.evidence.Find("memory")->number(), std::nullopt);
  EXPECT_EQ(r.evidence.entries()[3].first, "memory");
  EXPECT_EQ(r.advice, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(FindingJson(r).dump(), j.dump());
}

TEST(FindingRecord, KeepsAnIdThisVersionDoesNotKnow) {
  Json j = Json::parse(R"({"id":"made-up-by-a-newer-version","severity":"info"})");
  FindingRecord r;
  ASSERT_TRUE(FindingFromJson(j, &r).ok());
  EXPECT_EQ(r.id, "made-up-by-a-newer-version");
  EXPECT_EQ(FindingJson(r)["id"], "made-up-by-a-newer-version");
}

TEST(FindingRecord, AnIntegerStaysAnInteger) {
  Evidence e = {{"epoch", 0}, {"window_s", 2.0}, {"floors", size_t{7}}, {"from", "driver"}};
  EXPECT_EQ(EvidenceJson(e).dump(), R"({"epoch":0,"window_s":2.0,"floors":7,"from":"driver"})");
  e["window_s"] = 3.5;
  e["steps"] = 31.0;
  EXPECT_EQ(EvidenceJson(e).dump(),
            R"({"epoch":0,"window_s":3.5,"floors":7,"from":"driver","steps":31.0})");
}

TEST(FindingRecord, EverySubjectShapeReadsBack) {
  for (const char* text : {R"({})", R"({"gpu":1})", R"({"rank":2,"pid":412})", R"({"rank":3})",
                           R"({"pid":99})", R"({"memory":"job"})", R"({"memory":"host"})",
                           R"({"rank":3,"node":"gpu-b"})", R"({"gpu":0,"node":"gpu-b"})"}) {
    Json j = Json::parse(text);
    FindingSubject s;
    ASSERT_TRUE(SubjectFromJson(j, &s).ok()) << text;
    EXPECT_EQ(SubjectJson(s).dump(), j.dump());
  }
}

// The error names the key and what it expected.
std::string ErrorOf(const char* text) {
  FindingRecord r;
  Status s = FindingFromJson(Json::parse(text), &r);
  EXPECT_FALSE(s.ok()) << text;
  return s.message();
}

TEST(FindingRecord, AWrongKeyIsNamedWithWhatWasExpected) {
  EXPECT_EQ(ErrorOf(R"({"id":1,"severity":"info"})"), "key id: expected a string, got a number");
  EXPECT_EQ(ErrorOf(R"({"severity":"info"})"), "key id: missing, expected a string");
  EXPECT_EQ(ErrorOf(R"({"id":"x","severity":"fatal"})"),
            R"(key severity: expected info, warning or critical, got "fatal")");
  EXPECT_EQ(ErrorOf(R"({"id":"x"})"), "key severity: missing, expected info, warning or critical");
  EXPECT_EQ(ErrorOf(R"({"id":"x","severity":"info","opened_t":"soon"})"),
            "key opened_t: expected a number, got a string");
  EXPECT_EQ(ErrorOf(R"({"id":"x","severity":"info","subject":{"gpu":1.5}})"),
            "key subject.gpu: expected an integer, got 1.5");
  EXPECT_EQ(ErrorOf(R"({"id":"x","severity":"info","subject":{"memory":"disk"}})"),
            R"(key subject.memory: expected "job" or "host", got "disk")");
  EXPECT_EQ(ErrorOf(R"({"id":"x","severity":"info","advice":["a",2]})"),
            "key advice[1]: expected a string, got a number");
  EXPECT_EQ(ErrorOf(R"({"id":"x","severity":"info","subject":{"rank":1,"node":2}})"),
            "key subject.node: expected a string, got 2");
  EXPECT_EQ(ErrorOf("[]"), "expected an object, got an array");
}

TEST(FindingRecord, ASubjectOnANodeSaysWhichNode) {
  FindingSubject rank = FindingSubject::Process(3, std::nullopt);
  rank.node = "gpu-b";
  EXPECT_EQ(SubjectWords(rank), "rank 3 on gpu-b");
  FindingSubject job;
  job.node = "gpu-b";
  EXPECT_EQ(SubjectWords(job), "gpu-b");
}

TEST(FindingRecord, AWrongElementOfAListIsNamed) {
  std::vector<FindingRecord> out;
  Status s = FindingsFromJson(
      Json::parse(R"([{"id":"a","severity":"info"},{"id":"b","severity":"bad"}])"), &out);
  EXPECT_EQ(s.message(),
            R"(key findings[1].severity: expected info, warning or critical, got "bad")");
  EXPECT_EQ(out.size(), 1u);
}

TEST(FindingRecord, AnEventOfAnotherTypeIsRefused) {
  FindingRecord r;
  Status s = FindingFromEvent(Json::parse(R"({"t":1,"type":"start"})"), &r);
  EXPECT_EQ(s.message(), "key type: expected finding_open or finding_close");
}

// A view shows every finding of a summary it can read, and says why the others
// are left out.
TEST(FindingRecord, ASummarysUnreadableFindingIsLeftOutAndNamedTheRestAreRead) {
  std::vector<FindingRecord> found;
  Status s = FindingsFromSummary(nlohmann::json::parse(R"({"findings": [
    {"id": "input-bound", "severity": "warning"}, {"id": "stalled", "severity": "fatal"},
    {"id": "gpu-idle", "severity": "critical"}]})"),
                                 &found);
  EXPECT_EQ(s.message(),
            R"(key findings[1].severity: expected info, warning or critical, got "fatal")");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].id, "input-bound");
  EXPECT_EQ(found[1].id, "gpu-idle");
  EXPECT_TRUE(FindingsFromSummary(nlohmann::json::object(), &found).ok());
  EXPECT_TRUE(found.empty());
  EXPECT_FALSE(FindingsFromSummary(nlohmann::json::parse(R"({"findings": 3})"), &found).ok());
}

}  // namespace
}  // namespace tv::finding_record_test

#include "core/json_shape.h"

#include <gtest/gtest.h>

namespace tv::json_shape_test {
namespace {

using Json = nlohmann::ordered_json;

Json GoodSummary() {
  return Json::parse(R"({
    "run_dir": "/runs/a", "command": ["python", "t.py"], "start_t": 1, "duration_s": 2,
    "exit_code": 0, "exit_signal": null, "host": {}, "job": {}, "training": {},
    "gpus": [{"index": 0}],
    "epochs": [{"epoch": 1, "complete": true, "logs": {"loss": 0.5}, "gpus": [{"index": 0}]}],
    "phases": {"train": {"duration_s": 1, "gpus": []}},
    "findings": [{"id": "x", "severity": "warning", "message": "m", "subject": {}, "advice": []}],
    "alerts": [], "cost": {"currency": "EUR", "epochs": [{"epoch": 1}], "lost": {}},
    "health": {"score": 80}})");
}

TEST(JsonShape, GoodSummaryAndMetaPass) {
  EXPECT_EQ(JsonShapeError(GoodSummary(), SummaryShape()), "");
  Json meta = Json::parse(R"({"name": "a", "host": "h", "command": ["x"], "start_t": 1,
                              "interval_s": 1, "gpus": [{"index": 0, "name": "H100"}]})");
  EXPECT_EQ(JsonShapeError(meta, MetaShape()), "");
  EXPECT_EQ(JsonShapeError(Json::object(), SummaryShape()), "");  // absent keys are fine
}

TEST(JsonShape, NullCostIsNamed) {
  Json s = GoodSummary();
  s["cost"] = nullptr;
  EXPECT_EQ(JsonShapeError(s, SummaryShape()), "key cost: expected an object, got null");
}

TEST(JsonShape, ElementsAndMembersAreNamedWithTheirPlace) {
  Json s = GoodSummary();
  s["epochs"].push_back({{"epoch", 2}, {"complete", "yes"}});
  EXPECT_EQ(JsonShapeError(s, SummaryShape()),
            "key epochs[1].complete: expected a boolean, got a string");
  s = GoodSummary();
  s["phases"]["eval"] = 3;
  EXPECT_EQ(JsonShapeError(s, SummaryShape()), "key phases.eval: expected an object, got a number");
  s = GoodSummary();
  s["run_dir"] = Json::array();
  EXPECT_EQ(JsonShapeError(s, SummaryShape()), "key run_dir: expected a string, got an array");
  s = GoodSummary();
  s["duration_s"] = "long";
  EXPECT_EQ(JsonShapeError(s, SummaryShape()),
            "key duration_s: expected a number or null, got a string");
}

TEST(JsonShape, DocumentOfAnotherTypeAndOddKeysInMessages) {
  EXPECT_EQ(JsonShapeError(Json::array(), SummaryShape()), "expected an object, got an array");
  Json s = GoodSummary();
  s["phases"][std::string(100, 'p') + "\x1b"] = 1;
  std::string e = JsonShapeError(s, SummaryShape());
  EXPECT_EQ(e, "key phases." + std::string(40, 'p') + "...: expected an object, got a number");
}

TEST(JsonShape, WhyLineUnusableTellsJsonFromShape) {
  EXPECT_EQ(WhyLineUnusable("{\"t\": 1, \"gpus\": [{\"ind", SampleRowShape(), "a row"), "not JSON");
  EXPECT_EQ(WhyLineUnusable(R"({"t": 1, "host": 5})", SampleRowShape(), "a row of samples.jsonl"),
            "valid JSON but not a row of samples.jsonl (key host: expected an object, got a "
            "number)");
  EXPECT_EQ(WhyLineUnusable("[1]", EventShape(), "an event"),
            "valid JSON but not an event (expected an object, got an array)");
  EXPECT_EQ(WhyLineUnusable(std::string(1000, '[') + std::string(1000, ']'), EventShape(), "x"),
            "nested deeper than 64 levels");
}

}  // namespace
}  // namespace tv::json_shape_test

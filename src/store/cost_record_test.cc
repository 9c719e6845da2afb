#include "store/cost_record.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "store/run_v1_fixture.h"

namespace tv::cost_record_test {
namespace {

using Json = nlohmann::ordered_json;

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

TEST(CostRecord, TheCostOfASummaryWrittenBy010ComesBackByteForByte) {
  Json summary = RunV1Json("summary.json");
  std::optional<CostRecord> cost;
  ASSERT_TRUE(CostFromSummary(summary, &cost).ok());
  ASSERT_TRUE(cost.has_value());
  EXPECT_EQ(cost->gpus_used, 1);
  EXPECT_EQ(cost->busy_basis, "util_ratio");
  EXPECT_EQ(cost->busy_ratio, 0.4);
  ASSERT_TRUE(cost->lost.has_value());
  EXPECT_EQ(cost->lost->evaluation_ratio, 0.3742);
  EXPECT_FALSE(cost->lost->stalled_ratio);
  EXPECT_EQ(cost->currency, "EUR");
  ASSERT_EQ(cost->epochs.size(), 3u);
  EXPECT_EQ(cost->epochs[2].epoch, 2);
  EXPECT_EQ(cost->epochs[2].call, 1);
  EXPECT_TRUE(cost->epochs[2].complete);
  ASSERT_EQ(cost->phases.size(), 2u);
  EXPECT_EQ(cost->phases[1].first, "eval");
  ASSERT_TRUE(cost->forecast.has_value());
  EXPECT_EQ(cost->forecast->planned_epochs, 6);
  EXPECT_EQ(Dump(ToJson(*cost)), Dump(summary["cost"]));
}

// The whole summary.json, its cost replaced by the record's JSON and written
// as trainvitals writes it, is the file.
TEST(CostRecord, SummaryWithTheCostWrittenBackIsTheFile) {
  std::string text = RunV1Text("summary.json");
  Json summary = Json::parse(text);
  std::optional<CostRecord> cost;
  ASSERT_TRUE(CostFromSummary(summary, &cost).ok());
  summary["cost"] = ToJson(cost.value());
  EXPECT_EQ(summary.dump(2, ' ', false, Json::error_handler_t::replace) + "\n", text);
}

// Each `cost_forecast` line of events.jsonl, its forecast written back after
// "t" and "type" as the events file writes them, is the line.
TEST(CostForecast, ForecastEventsOfVersion1ReadAndWriteBackByteForByte) {
  std::istringstream lines(RunV1Text("events.jsonl"));
  std::string line;
  int seen = 0;
  while (std::getline(lines, line)) {
    Json event = Json::parse(line);
    if (event["type"] != "cost_forecast") continue;
    ++seen;
    CostForecast f;
    Status s = ForecastFromJson(event, &f);  // "t" and "type" are not the forecast's
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(f.currency, "EUR");
    Json back = {{"t", event["t"]}, {"type", "cost_forecast"}};
    Json fields = ToJson(f);
    for (const auto& [k, v] : fields.items()) back[k] = v;
    EXPECT_EQ(Dump(back), line);
  }
  EXPECT_EQ(seen, 3);
}

TEST(CostRecord, AWrongTypeIsNamedAndTheRestIsStillRead) {
  auto summary = Json::parse(R"({"cost": {"gpus_used": 2, "busy_ratio": "40 %",
      "energy_kwh": 1.5, "epochs": [{"epoch": 0, "money": 2}, {"epoch": 1, "money": "2 EUR"}]}})");
  std::optional<CostRecord> cost;
  Status s = CostFromSummary(summary, &cost);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "key cost.busy_ratio: expected a number, got a string");
  ASSERT_TRUE(cost.has_value());
  EXPECT_FALSE(cost->busy_ratio);
  EXPECT_EQ(cost->gpus_used, 2);
  EXPECT_EQ(cost->energy_kwh, 1.5);
  ASSERT_EQ(cost->epochs.size(), 2u);
  EXPECT_FALSE(cost->epochs[1].money);
  EXPECT_EQ(CostOf(summary)->energy_kwh, 1.5);  // a view shows what it can

  CostRecord c;
  s = CostFromJson(Json::parse(R"({"epochs": [{"epoch": 0.5}]})"), &c);
  EXPECT_EQ(s.message(), "key epochs[0].epoch: expected a whole number, got 0.5");
  s = CostFromJson(Json::parse(R"({"phases": {"train": {"share": true}}})"), &c);
  EXPECT_EQ(s.message(), "key phases.train.share: expected a number, got a boolean");
  s = CostFromJson(nlohmann::json::parse(R"({"forecast": {"planned_epochs": "six"}})"), &c);
  EXPECT_EQ(s.message(), "key forecast.planned_epochs: expected a whole number, got a string");
  s = CostFromSummary(Json::parse(R"({"cost": [1]})"), &cost);
  EXPECT_EQ(s.message(), "key cost: expected an object, got an array");
  EXPECT_FALSE(cost);
}

TEST(CostRecord, NoCostAndNullsAreUnknownNotErrors) {
  std::optional<CostRecord> cost;
  EXPECT_TRUE(CostFromSummary(Json::parse(R"({"duration_s": 3})"), &cost).ok());
  EXPECT_FALSE(cost);
  EXPECT_TRUE(CostFromSummary(Json::parse(R"({"cost": null})"), &cost).ok());
  EXPECT_FALSE(cost);
  CostRecord c;
  EXPECT_TRUE(CostFromJson(Json::parse(R"({"money": null, "currency": "EUR"})"), &c).ok());
  EXPECT_FALSE(c.money);
  EXPECT_EQ(c.currency, "EUR");
}

TEST(CostRecord, WritesEachKeyOnlyWhenSetEpochsAndPhasesAlways) {
  CostRecord c;
  c.gpus_used = 0;
  c.gpu_hours = 0.0;
  EXPECT_EQ(ToJson(c).dump(), R"({"gpus_used":0,"gpu_hours":0.0,"epochs":[],"phases":{}})");
  c.lost = CostLost{};
  EpochCost& e = c.epochs.emplace_back();
  e.epoch = 3;
  e.duration_s = 60.0;
  e.complete = false;
  c.phases.emplace_back("eval", PhaseCost{.duration_s = 1.5, .share = 0.25});
  EXPECT_EQ(ToJson(c).dump(), R"({"gpus_used":0,"gpu_hours":0.0,"lost":{},)"
                              R"("epochs":[{"epoch":3,"duration_s":60.0,"complete":false}],)"
                              R"("phases":{"eval":{"duration_s":1.5,"share":0.25}}})");
}

TEST(CostForecast, TheEventCarriesTheCurrencyTheSummaryDoesNot) {
  CostForecast f;
  f.planned_epochs = 10;
  f.epochs_done = 2;
  f.duration_s = 7200.0;
  f.money = 3.5;
  EXPECT_EQ(ToJson(f).dump(),
            R"({"planned_epochs":10,"epochs_done":2,"duration_s":7200.0,"money":3.5})");
  f.currency = "EUR";
  Json event = ToJson(f);
  event["t"] = 1000.0;  // an event's own keys are not the forecast's
  CostForecast back;
  ASSERT_TRUE(ForecastFromJson(event, &back).ok());
  EXPECT_EQ(back.currency, "EUR");
  EXPECT_EQ(ToJson(back).dump(), ToJson(f).dump());
}

}  // namespace
}  // namespace tv::cost_record_test

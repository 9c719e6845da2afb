// meta.json's judges: written from a run's thresholds and rates, read back to
// the same values; a value that cannot be used names meta.json and its key.
#include "analysis/judges.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tv::judges_test {
namespace {

std::string Refusal(const nlohmann::json& meta) {
  try {
    JudgesFromMeta(meta, "RUN/meta.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(Judges, EveryThresholdAndRateComesBackAsTheRunHadIt) {
  Thresholds th;
  ASSERT_EQ(th.Set("input_bound_ratio", 0.2), "");
  ASSERT_EQ(th.Set("warmup_s", 0), "");
  CostRates rates;
  rates.pue = 1.2;
  rates.kwh_price = 0.3;
  rates.currency = "EUR";
  rates.gpu_hour_price = {{"h100", 2.5}, {"default", 1}};
  nlohmann::ordered_json meta = {{"thresholds", ThresholdsJson(th)},
                                 {"cost_rates", CostRatesJson(rates)},
                                 {"alert_rules", AlertRulesJson({})}};
  EXPECT_EQ(meta["thresholds"].size(), ThresholdDefs().size());  // every one, not only changed
  RunJudges j = JudgesFromMeta(nlohmann::json::parse(meta.dump()), "RUN/meta.json");
  ASSERT_TRUE(j.thresholds);
  EXPECT_TRUE(ChangedThresholds(th, *j.thresholds).empty());
  EXPECT_EQ((*j.thresholds)[Th::kInputBoundRatio], 0.2);
  EXPECT_TRUE(j.notes.empty());
  ASSERT_TRUE(j.cost_rates);
  EXPECT_EQ(CostRatesJson(*j.cost_rates), CostRatesJson(rates));
  EXPECT_EQ(j.alert_rules, 0u);
}

TEST(Judges, ARunWithoutJudgesHasNone) {
  RunJudges j = JudgesFromMeta(nlohmann::json::parse(R"({"schema_version": 1})"), "m");
  EXPECT_FALSE(j.thresholds);
  EXPECT_FALSE(j.cost_rates);
  Config config;
  ThresholdChoice c = ChooseThresholds(j, "", config);
  EXPECT_EQ(c.source, "defaults");
  EXPECT_FALSE(c.compared);
}

TEST(Judges, BadValuesNameTheFileAndKey) {
  EXPECT_EQ(Refusal({{"thresholds", {{"input_bound_ratio", -1}}}}),
            "RUN/meta.json: key thresholds.input_bound_ratio: expected a number >= 0, got -1");
  EXPECT_NE(Refusal({{"thresholds", {{"input_bound_ratio", "high"}}}})
                .find("RUN/meta.json: key thresholds.input_bound_ratio"),
            std::string::npos);
  EXPECT_NE(Refusal({{"thresholds", 3}}).find("RUN/meta.json: key thresholds"), std::string::npos);
  EXPECT_EQ(Refusal({{"cost_rates", {{"pue", 0.5}}}}),
            "RUN/meta.json: key cost_rates.pue: expected a number from 1 to 5, got 0.5");
  EXPECT_EQ(Refusal({{"cost_rates", {{"gpu_hour_price", {{"h100", -2}}}}}}),
            "RUN/meta.json: key cost_rates.gpu_hour_price.h100: expected a price from 0 to "
            "1e+06, got -2");
}

TEST(Judges, ForeignAndMissingThresholdsAreNotedNotFatal) {
  nlohmann::json meta = {{"thresholds", {{"no_such_threshold", 1}, {"window_s", 30}}}};
  RunJudges j = JudgesFromMeta(meta, "RUN/meta.json");
  ASSERT_TRUE(j.thresholds);
  EXPECT_EQ((*j.thresholds)[Th::kWindow_s], 30);
  ASSERT_EQ(j.notes.size(), 2u);
  EXPECT_NE(j.notes[0].find("no_such_threshold is not one of this version's"), std::string::npos);
  EXPECT_NE(j.notes[1].find("this version's default used"), std::string::npos);
}

TEST(Judges, ConfigGivenSaysWhichThresholdsDifferFromTheRuns) {
  Thresholds run;
  ASSERT_EQ(run.Set("input_bound_ratio", 0.2), "");
  RunJudges j;
  j.thresholds = run;
  Config config;
  config.findings.push_back({"input_bound_ratio", 0.5, "x.toml:2"});
  // Without --config: the run's own, whatever $TRAINVITALS_CONFIG holds.
  ThresholdChoice own = ChooseThresholds(j, "", config);
  EXPECT_EQ(own.source, "run");
  EXPECT_EQ(own.thresholds[Th::kInputBoundRatio], 0.2);
  EXPECT_EQ(JudgedWithLine(own), "");
  ThresholdChoice given = ChooseThresholds(j, "x.toml", config);
  EXPECT_EQ(given.thresholds[Th::kInputBoundRatio], 0.5);
  EXPECT_EQ(JudgedWithLine(given),
            "judged with --config x.toml: input_bound_ratio 0.5 (the run used 0.2)");
  EXPECT_EQ(ChoiceJson(given).dump(),
            R"({"source":"config","config":"x.toml","changed":[{"key":"input_bound_ratio",)"
            R"("value":0.5,"run_value":0.2}]})");
  config.findings[0].value = 0.2;
  EXPECT_EQ(JudgedWithLine(ChooseThresholds(j, "x.toml", config)),
            "judged with --config x.toml: the run's own thresholds");
}

}  // namespace
}  // namespace tv::judges_test

#include "views/compare.h"

#include <gtest/gtest.h>

namespace tv {
namespace {

using Json = nlohmann::ordered_json;

Json Summary(double duration, double steps_per_s, double wait, std::vector<double> epoch_s) {
  Json epochs = Json::array();
  Json cost_epochs = Json::array();
  for (size_t i = 0; i < epoch_s.size(); ++i) {
    epochs.push_back(
        {{"epoch", i}, {"duration_s", epoch_s[i]}, {"logs", {{"loss", 1.0 / (i + 1)}}}});
    cost_epochs.push_back({{"epoch", i}, {"energy_kwh", epoch_s[i] / 1000}});
  }
  return {
      {"run_dir", "/runs/x"},
      {"duration_s", duration},
      {"training",
       {{"steps_per_second", {{"mean", steps_per_s}, {"max", steps_per_s}}},
        {"data_wait_ratio", {{"mean", wait}, {"max", wait}}}}},
      {"gpus", {{{"index", 0}, {"job_memory_bytes", {{"mean", 1e9}, {"max", 8e9}}}}}},
      {"epochs", epochs},
      {"cost", {{"busy_ratio", 0.5}, {"energy_kwh", duration / 1000}, {"epochs", cost_epochs}}}};
}

const Json& Figure(const Json& c, std::string_view key) {
  for (const Json& f : c["figures"]) {
    if (f["key"] == key) return f;
  }
  static const Json kNone;
  return kNone;
}

TEST(Compare, ChangesAreAgainstTheFirstRunAndPointsForShares) {
  Json a = Summary(100, 10, 0.30, {40, 40, 20});
  Json b = Summary(80, 13.5, 0.10, {30, 30});
  b["gpus"][0]["job_memory_bytes"]["max"] = 6.4e9;
  Json c = CompareRuns({{"a", a}, {"b", b}});
  EXPECT_EQ(Figure(c, "duration_s")["changes"], Json::parse("[null, -0.2]"));
  EXPECT_EQ(Figure(c, "steps_per_second")["changes"], Json::parse("[null, 0.35]"));
  EXPECT_EQ(Figure(c, "data_wait_ratio")["changes"], Json::parse("[null, -0.2]"));  // 20 points
  EXPECT_EQ(Figure(c, "gpu_memory_peak_bytes")["changes"], Json::parse("[null, -0.2]"));
  EXPECT_EQ(Figure(c, "epoch_s")["values"], Json::parse("[33.333333333333336, 30.0]"));
  EXPECT_TRUE(Figure(c, "money").is_null());  // no run has it
  // Epochs both runs have.
  ASSERT_EQ(c["epochs"].size(), 2u);
  EXPECT_EQ(c["epochs"][1]["duration_s"], Json::parse("[40.0, 30.0]"));
  EXPECT_EQ(c["epochs"][1]["energy_kwh"], Json::parse("[0.04, 0.03]"));
  EXPECT_EQ(c["epochs"][1]["loss"], Json::parse("[0.5, 0.5]"));
  std::string text = FormatComparison(c);
  EXPECT_NE(text.find("steps/s                 10                    13.5 +35%\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("data wait               30%                   10% -20 pts\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Epochs every run has (2), by number\n"), std::string::npos) << text;
}

TEST(Compare, AnEpochCutShortOrMissingIsNotMatched) {
  Json a = Summary(100, 10, 0.3, {40, 40});
  Json b = Summary(100, 10, 0.3, {40, 40});
  b["epochs"][1]["complete"] = false;
  Json c = CompareRuns({{"a", a}, {"b", b}});
  ASSERT_EQ(c["epochs"].size(), 1u);
  EXPECT_EQ(c["epochs"][0]["epoch"], 0);
  Json no_epochs = {{"duration_s", 5}};
  Json d = CompareRuns({{"a", a}, {"plain", no_epochs}});
  EXPECT_TRUE(d["epochs"].empty());
  EXPECT_EQ(Figure(d, "steps_per_second")["values"], Json::parse("[10.0, null]"));
  EXPECT_EQ(Figure(d, "steps_per_second")["changes"], Json::parse("[null, null]"));
  EXPECT_EQ(FormatComparison(d).find("Epochs"), std::string::npos);
}

}  // namespace
}  // namespace tv

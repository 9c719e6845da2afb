// The verdict's numbers go into summary.json as they always have and come
// back typed; what is mistyped stays unknown and is named.
#include "store/health_record.h"

#include <gtest/gtest.h>

#include "store/run_v1_fixture.h"

namespace tv::health_record_test {
namespace {

GoodputRecord HalfWaiting() {
  GoodputRecord g;
  g.wall_s = 100;
  g.productive_ratio = 0.4;
  g.seconds[static_cast<size_t>(Spent::kProductive)] = 40;
  g.seconds[static_cast<size_t>(Spent::kDataWait)] = 50;
  g.seconds[static_cast<size_t>(Spent::kStartup)] = 10;
  g.ratios[static_cast<size_t>(Spent::kProductive)] = 0.4;
  g.ratios[static_cast<size_t>(Spent::kDataWait)] = 0.5;
  g.ratios[static_cast<size_t>(Spent::kStartup)] = 0.1;
  g.percent[static_cast<size_t>(Spent::kProductive)] = 40;
  g.percent[static_cast<size_t>(Spent::kDataWait)] = 50;
  g.percent[static_cast<size_t>(Spent::kStartup)] = 10;
  return g;
}

TEST(HealthRecord, AJudgedRunIsWrittenInTheSummarysOrderAndReadBack) {
  HealthRecord h;
  h.score = 50;
  h.breakdown = {{"waiting for input 50% of the time (input-bound)", -50}};
  h.gpu_busy_ratio = 0.9;
  h.goodput = HalfWaiting();
  h.not_judged = {{"gpu-idle", "5 min holding a GPU after the warm-up (30 s)"}};
  h.epochs = {{0, 48, HalfWaiting()}};
  nlohmann::ordered_json j = HealthJson(h);
  std::vector<std::string> keys;
  for (const auto& [key, value] : j.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"score", "breakdown", "gpu_busy_ratio", "goodput",
                                            "not_judged", "epochs"}));
  EXPECT_EQ(j["breakdown"].dump(),
            R"j([{"what":"waiting for input 50% of the time (input-bound)","points":-50}])j");
  EXPECT_EQ(j["goodput"]["percent"]["data_wait"], 50);
  EXPECT_EQ(j["goodput"]["seconds"].size(), kSpentCount);

  HealthRecord back;
  ASSERT_TRUE(HealthFromJson(nlohmann::json::parse(j.dump()), &back).ok());
  EXPECT_EQ(back.score, 50);
  ASSERT_EQ(back.breakdown.size(), 1u);
  EXPECT_EQ(back.breakdown[0].points, -50);
  EXPECT_EQ(back.gpu_busy_ratio, 0.9);
  ASSERT_TRUE(back.goodput);
  EXPECT_EQ(back.goodput->Percent(Spent::kDataWait), 50);
  EXPECT_EQ(back.goodput->Seconds(Spent::kStartup), 10);
  EXPECT_EQ(back.goodput->productive_ratio, 0.4);
  ASSERT_EQ(back.not_judged.size(), 1u);
  EXPECT_EQ(back.not_judged[0].id, "gpu-idle");
  ASSERT_EQ(back.epochs.size(), 1u);
  EXPECT_EQ(back.epochs[0].score, 48);
  EXPECT_EQ(HealthJson(back).dump(), j.dump());
}

TEST(HealthRecord, AnUnjudgedRunHasItsNoteAndNoScoreOrBreakdown) {
  HealthRecord h;
  h.note = "not judged: the run was shorter than its warm-up (30 s)";
  h.goodput = GoodputRecord{.wall_s = 3};
  nlohmann::ordered_json j = HealthJson(h);
  EXPECT_FALSE(j.contains("score"));
  EXPECT_FALSE(j.contains("breakdown"));
  EXPECT_FALSE(j["goodput"].contains("productive_ratio"));
  HealthRecord back;
  ASSERT_TRUE(HealthFromJson(j, &back).ok());
  EXPECT_EQ(back.note, h.note);
  EXPECT_FALSE(back.score);
  ASSERT_TRUE(back.goodput);
  EXPECT_FALSE(back.goodput->productive_ratio);
}

TEST(HealthRecord, AMistypedKeyIsUnknownAndNamedTheRestIsRead) {
  HealthRecord h;
  Status s = HealthFromJson(nlohmann::json::parse(R"j({
    "score": "high", "breakdown": [{"what": "x", "points": 1.5}, {"what": "y", "points": -3}],
    "goodput": {"wall_s": 10, "percent": {"data_wait": "most"}},
    "not_judged": [7, {"id": "stalled", "needs": "more"}]})j"),
                            &h);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "key health.score: expected a number, got a string");
  EXPECT_FALSE(h.score);
  ASSERT_EQ(h.breakdown.size(), 2u);
  EXPECT_EQ(h.breakdown[1].points, -3);
  ASSERT_TRUE(h.goodput);
  EXPECT_EQ(h.goodput->wall_s, 10);
  EXPECT_EQ(h.goodput->Percent(Spent::kDataWait), 0);
  ASSERT_EQ(h.not_judged.size(), 1u);
  EXPECT_EQ(h.not_judged[0].id, "stalled");

  HealthRecord none;
  EXPECT_TRUE(HealthFromSummary(nlohmann::json::object(), &none).ok());
  EXPECT_FALSE(none.score);
  EXPECT_FALSE(HealthFromSummary(nlohmann::json::array(), &none).ok());
}

// The health of a summary written by 0.1.0, read and written back in its
// place, is the file.
TEST(HealthRecord, OfASummaryWrittenBy010WrittenBackIsTheFile) {
  std::string text = RunV1Text("summary.json");
  nlohmann::ordered_json summary = nlohmann::ordered_json::parse(text);
  HealthRecord h;
  ASSERT_TRUE(HealthFromSummary(summary, &h).ok());
  EXPECT_EQ(h.score, 48);
  EXPECT_FALSE(h.epochs.empty());
  ASSERT_TRUE(h.goodput);
  EXPECT_EQ(h.goodput->Percent(Spent::kDataWait), 30);
  summary["health"] = HealthJson(h);
  EXPECT_EQ(summary.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n",
            text);
}

}  // namespace
}  // namespace tv::health_record_test

// Memory trends go into summary.json as they always have and come back typed;
// what is mistyped stays unknown and is named.
#include "store/memory_trend_record.h"

#include <gtest/gtest.h>

#include "store/run_v1_fixture.h"

namespace tv::memory_trend_record_test {
namespace {

TEST(MemoryTrendRecord, ALeakIsWrittenWithItsSubjectFirstAndReadBack) {
  MemoryTrendRecord leak;
  leak.subject = FindingSubject::Gpu(1);
  leak.figure = "gpus[].allocator_allocated_bytes";
  leak.floors = 8;
  leak.floors_by_epoch = true;
  leak.growth_bytes_per_hour = 3.6e9;
  leak.growth_bytes_per_epoch = 5e7;
  leak.confidence = 0.9987;
  leak.verdict = "leak";
  MemoryTrendRecord young{.subject = FindingSubject::MemoryOf(FindingSubject::Memory::kJob),
                          .figure = "job.memory_bytes",
                          .floors = 2,
                          .verdict = "not enough evidence yet"};
  nlohmann::ordered_json j = MemoryTrendsJson({leak, young});
  EXPECT_EQ(j.dump(),
            R"([{"subject":{"gpu":1},"figure":"gpus[].allocator_allocated_bytes","floors":8,)"
            R"("floors_by":"epoch","growth_bytes_per_hour":3600000000.0,)"
            R"("growth_bytes_per_epoch":50000000.0,"confidence":0.9987,"verdict":"leak"},)"
            R"({"subject":{"memory":"job"},"figure":"job.memory_bytes","floors":2,)"
            R"("floors_by":"window","verdict":"not enough evidence yet"}])");
  // A leak finding's evidence: the figures without subject and figure.
  EXPECT_FALSE(MemoryTrendFiguresJson(leak).contains("subject"));
  std::vector<MemoryTrendRecord> back;
  ASSERT_TRUE(MemoryTrendsFromJson(nlohmann::json::parse(j.dump()), &back).ok());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].subject, FindingSubject::Gpu(1));
  EXPECT_TRUE(back[0].floors_by_epoch);
  EXPECT_EQ(back[0].growth_bytes_per_epoch, 5e7);
  EXPECT_EQ(back[0].confidence, 0.9987);
  EXPECT_FALSE(back[1].growth_bytes_per_hour);
  EXPECT_EQ(MemoryTrendsJson(back).dump(), j.dump());
}

TEST(MemoryTrendRecord, AMistypedTrendIsNamedAndTheRestIsRead) {
  std::vector<MemoryTrendRecord> t;
  Status s = MemoryTrendsFromJson(nlohmann::json::parse(R"([
    "leak", {"subject": {"gpu": 0}, "floors": "six", "verdict": "no leak"}])"),
                                  &t);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "key memory_trends[0]: expected an object, got a string");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].subject, FindingSubject::Gpu(0));
  EXPECT_EQ(t[0].floors, 0);
  EXPECT_EQ(t[0].verdict, "no leak");
  EXPECT_FALSE(MemoryTrendsFromJson(nlohmann::json::object(), &t).ok());
  EXPECT_TRUE(MemoryTrendsFromSummary(nlohmann::json::object(), &t).ok());
  EXPECT_TRUE(t.empty());
}

TEST(MemoryTrendRecord, OfASummaryWrittenBy010WrittenBackAreTheFile) {
  std::string text = RunV1Text("summary.json");
  nlohmann::ordered_json summary = nlohmann::ordered_json::parse(text);
  std::vector<MemoryTrendRecord> t;
  ASSERT_TRUE(MemoryTrendsFromSummary(summary, &t).ok());
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[1].subject, FindingSubject::Gpu(0));
  summary["memory_trends"] = MemoryTrendsJson(t);
  EXPECT_EQ(summary.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n",
            text);
}

}  // namespace
}  // namespace tv::memory_trend_record_test

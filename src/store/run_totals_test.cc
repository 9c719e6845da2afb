// The whole-run figures go into summary.json as they always have and come
// back by handle; what is mistyped stays unknown and is named.
#include "store/run_totals.h"

#include <gtest/gtest.h>

#include "core/aggregator.h"
#include "store/run_v1_fixture.h"

namespace tv::run_totals_test {
namespace {

Row TwoSamples() {
  Aggregator agg;
  Sample s;
  s.host.cpu_util_ratio = 0.25;
  s.host.cpu_energy_joules = 100;
  s.job.memory_bytes = 1e9;
  s.job.processes = 3;
  GpuSample g;
  g.index = 1;
  g.physical_index = 3;
  g.mig_instance = 2;
  g.util_ratio = 0.123456;
  g.energy_joules = 50;
  s.gpus.push_back(g);
  agg.Add(s);
  s.host.cpu_util_ratio = 0.75;
  s.host.cpu_energy_joules = 160;
  s.job.memory_bytes = 2e9 + 0.4;
  s.job.processes = 4;
  s.gpus[0].util_ratio = 0.5;
  s.gpus[0].energy_joules = 80;
  agg.Add(s);
  return agg.Take(1700000000, 2);
}

TEST(RunTotals, AreWrittenAsSummaryJsonHoldsThem) {
  nlohmann::ordered_json summary = {{"rows", 2}};
  PutTotals(TotalsOf(TwoSamples()), &summary);
  // Gauges as mean and max, counters as their last value; whole units as
  // integers, the rest to 4 decimals; keys in the order of the table.
  EXPECT_EQ(
      summary.dump(),
      R"({"rows":2,"host":{"cpu_util_ratio":{"mean":0.5,"max":0.75},"cpu_energy_joules":160.0},)"
      R"("job":{"processes":{"mean":4,"max":4},"memory_bytes":{"mean":1500000000,"max":2000000000}},)"
      R"("gpus":[{"index":1,"physical_index":3,"mig":2,"util_ratio":{"mean":0.3117,"max":0.5},)"
      R"("energy_joules":80.0}]})");
}

TEST(RunTotals, ReadBackByHandle) {
  nlohmann::ordered_json summary;
  PutTotals(TotalsOf(TwoSamples()), &summary);
  RunTotals t;
  ASSERT_TRUE(TotalsFromSummary(nlohmann::json::parse(summary.dump()), &t).ok());
  EXPECT_EQ(t.run.Value(metric::kHostCpuUtilRatio), 0.5);
  EXPECT_EQ(t.run.Max(metric::kHostCpuUtilRatio), 0.75);
  EXPECT_EQ(t.run.Value(metric::kHostCpuEnergyJoules), 160);
  EXPECT_EQ(t.run.Max(metric::kHostCpuEnergyJoules), 160);  // a counter's max is its value
  EXPECT_EQ(t.run.Max(metric::kJobMemoryBytes), 2e9);
  EXPECT_FALSE(t.run.Has(metric::kJobRssBytes));               // not measured
  EXPECT_FALSE(t.run.Value(metric::kTrainingStepsPerSecond));  // no training figures
  EXPECT_FALSE(t.run.Value(metric::kGpuUtilRatio));            // of the other table
  ASSERT_EQ(t.gpus.size(), 1u);
  EXPECT_EQ(t.gpus[0].index, 1);
  EXPECT_EQ(t.gpus[0].physical_index, 3);
  EXPECT_EQ(t.gpus[0].mig, 2);
  EXPECT_EQ(t.gpus[0].Value(metric::kGpuUtilRatio), 0.3117);
  EXPECT_EQ(t.gpus[0].Value(metric::kGpuEnergyJoules), 80);
  // Written again, byte for byte what was read.
  nlohmann::ordered_json again;
  PutTotals(t, &again);
  EXPECT_EQ(again.dump(), summary.dump());
}

TEST(RunTotals, AMistypedFigureIsUnknownAndNamedTheRestIsRead) {
  RunTotals t;
  Status s = TotalsFromSummary(nlohmann::json::parse(R"j({
    "host": {"cpu_util_ratio": 0.5, "memory_used_bytes": {"mean": 1e9, "max": 2e9}},
    "job": {"cpu_cores": {"mean": "lots", "max": 2}, "unknown_figure": {"mean": 1}},
    "gpus": [7, {"index": 0, "util_ratio": {"mean": 0.4, "max": 0.9}}]})j"),
                               &t);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "key host.cpu_util_ratio: expected an object, got a number");
  EXPECT_FALSE(t.run.Value(metric::kHostCpuUtilRatio));
  EXPECT_EQ(t.run.Max(metric::kHostMemoryUsedBytes), 2e9);
  EXPECT_FALSE(t.run.Value(metric::kJobCpuCores));  // a gauge without a numeric mean
  ASSERT_EQ(t.gpus.size(), 1u);                     // the entry that is no object left out
  EXPECT_EQ(t.gpus[0].Max(metric::kGpuUtilRatio), 0.9);
  // Not a summary at all.
  EXPECT_FALSE(TotalsFromSummary(nlohmann::json::array(), &t).ok());
  EXPECT_TRUE(t.gpus.empty());
}

// The whole-run figures of a summary written by 0.1.0, read and written back
// in their place, are the file.
TEST(RunTotals, OfASummaryWrittenBy010WrittenBackAreTheFile) {
  std::string text = RunV1Text("summary.json");
  nlohmann::ordered_json summary = nlohmann::ordered_json::parse(text);
  RunTotals t;
  ASSERT_TRUE(TotalsFromSummary(summary, &t).ok());
  EXPECT_TRUE(t.run.Has(metric::kJobMemoryBytes));
  ASSERT_FALSE(t.gpus.empty());
  PutTotals(t, &summary);
  EXPECT_EQ(summary.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n",
            text);
}

}  // namespace
}  // namespace tv::run_totals_test

#include "core/aggregator.h"

#include <gtest/gtest.h>

#include "core/metrics.h"

namespace tv::aggregator_test {
namespace {

size_t GpuMetricIndex(std::string_view name) {
  auto m = GpuMetrics();
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i].name == name) return i;
  }
  ADD_FAILURE() << "no metric " << name;
  return 0;
}

TEST(Aggregator, GpuPeakReachesMaxButNotMean) {
  Aggregator agg;
  Sample s;
  GpuSample& g = s.gpus.emplace_back();
  g.util_ratio = 0.2;
  g.util_ratio_peak = 0.9;
  agg.Add(s);
  g.util_ratio = 0.4;
  g.util_ratio_peak.reset();
  agg.Add(s);
  Row row = agg.Take(0, 1);
  ASSERT_EQ(row.gpus.size(), 1u);
  auto stat = row.gpus[0].values[GpuMetricIndex("util_ratio")];
  ASSERT_TRUE(stat);
  EXPECT_DOUBLE_EQ(stat->mean, 0.3);
  EXPECT_DOUBLE_EQ(stat->max, 0.9);
  EXPECT_DOUBLE_EQ(stat->last, 0.4);
}

TEST(Aggregator, GpuRowKeepsTheLatestProcessList) {
  Aggregator agg;
  Sample s;
  GpuSample& g = s.gpus.emplace_back();
  g.processes.known = true;
  g.processes.size = 2;
  g.processes.items[0] = GpuProcess{10, "python", true, 4e9, 0.5};
  g.processes.items[1] = GpuProcess{11, "other", false, 1e9, std::nullopt};
  agg.Add(s);
  g.processes.size = 1;
  g.processes.items[0] = GpuProcess{12, "late", false, 2e9, std::nullopt};
  agg.Add(s);
  Row row = agg.Peek(0, 1);
  ASSERT_EQ(row.gpus.size(), 1u);
  ASSERT_EQ(row.gpus[0].processes.size(), 1u);
  EXPECT_EQ(row.gpus[0].processes[0].pid, 12);
  EXPECT_EQ(row.gpus[0].processes[0].name, "late");
  EXPECT_FALSE(row.gpus[0].processes[0].is_job);
  EXPECT_DOUBLE_EQ(*row.gpus[0].processes[0].memory_bytes, 2e9);

  g.processes.size = 0;  // a later sample with no process empties the list
  agg.Add(s);
  EXPECT_TRUE(agg.Take(0, 1).gpus[0].processes.empty());
}

TEST(Aggregator, MigInstancesAreRowsOfTheirOwn) {
  Aggregator agg;
  Sample s;
  s.gpus.emplace_back().memory_used_bytes = 10;
  GpuSample& mig = s.gpus.emplace_back();
  mig.mig_instance = 3;
  mig.memory_used_bytes = 4;
  agg.Add(s);
  Row row = agg.Take(0, 1);
  ASSERT_EQ(row.gpus.size(), 2u);
  EXPECT_EQ(row.gpus[0].mig_instance, -1);
  EXPECT_EQ(row.gpus[1].mig_instance, 3);
  EXPECT_DOUBLE_EQ(row.gpus[1].values[GpuMetricIndex("memory_used_bytes")]->mean, 4);
}

}  // namespace
}  // namespace tv::aggregator_test

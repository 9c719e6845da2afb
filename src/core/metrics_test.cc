#include "core/metrics.h"

#include <gtest/gtest.h>

namespace tv::metrics_test {
namespace {

TEST(MetricHandles, NameTheirTableEntries) {
  EXPECT_EQ(Def(metric::kJobCpuCores).name, "cpu_cores");
  EXPECT_EQ(Def(metric::kJobCpuCores).scope, Scope::kJob);
  EXPECT_EQ(Def(metric::kHostMemoryLimitBytes).scope, Scope::kHost);
  EXPECT_EQ(Def(metric::kGpuPowerWatts).name, "power_watts");
  EXPECT_EQ(Def(metric::kGpuPowerWatts).scope, Scope::kGpu);
}

TEST(MetricHandles, FindTheirValueInARow) {
  std::vector<std::optional<Stat>> values(SampleMetrics().size());
  Stat cpu;
  cpu.mean = 1.5;
  values[metric::kJobCpuCores.index] = cpu;
  ASSERT_TRUE(FindStat(metric::kJobCpuCores, values));
  EXPECT_DOUBLE_EQ(FindStat(metric::kJobCpuCores, values)->mean, 1.5);
  EXPECT_FALSE(FindStat(metric::kJobMemoryBytes, values));
  EXPECT_FALSE(FindStat(metric::kGpuUtilRatio, {}));  // a row without the metric
}

}  // namespace
}  // namespace tv::metrics_test

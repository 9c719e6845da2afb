#include "sinks/tfevents/row_scalars.h"

#include <gtest/gtest.h>

#include <map>

namespace tv::row_scalars_test {
namespace {

size_t IndexOf(std::span<const MetricDef> defs, Scope scope, std::string_view name) {
  for (size_t i = 0; i < defs.size(); ++i) {
    if (defs[i].scope == scope && defs[i].name == name) return i;
  }
  ADD_FAILURE() << name;
  return 0;
}

std::map<std::string, float> Scalars(const Row& row) {
  std::map<std::string, float> out;
  for (const TbScalar& s : RowScalars(row)) out[s.tag] = s.value;
  return out;
}

TEST(RowScalars, MemoryInMibRatiosAsTheyAreMaxOnlyForChosenGauges) {
  Row row;
  row.values.resize(SampleMetrics().size());
  row.values[IndexOf(SampleMetrics(), Scope::kJob, "memory_bytes")] =
      Stat{512.0 * 1048576, 1024.0 * 1048576, 0, 3};
  row.values[IndexOf(SampleMetrics(), Scope::kHost, "cpu_util_ratio")] = Stat{0.25, 0.5, 0.3, 3};
  row.values[IndexOf(SampleMetrics(), Scope::kJob, "threads")] = Stat{4, 6, 5, 3};
  GpuRow gpu;
  gpu.index = 1;
  gpu.values.resize(GpuMetrics().size());
  gpu.values[IndexOf(GpuMetrics(), Scope::kGpu, "util_ratio")] = Stat{0.75, 1, 1, 3};
  row.gpus.push_back(gpu);
  auto s = Scalars(row);
  EXPECT_FLOAT_EQ(s.at("job/memory_mib"), 512);
  EXPECT_FLOAT_EQ(s.at("job/memory_mib_max"), 1024);
  EXPECT_FLOAT_EQ(s.at("system/cpu_util_ratio"), 0.25);
  EXPECT_FLOAT_EQ(s.at("system/cpu_util_ratio_max"), 0.5);
  EXPECT_FLOAT_EQ(s.at("job/threads"), 4);
  EXPECT_FALSE(s.contains("job/threads_max"));  // table keeps a max, TensorBoard does not
  EXPECT_FLOAT_EQ(s.at("gpu1/util_ratio"), 0.75);
  EXPECT_FLOAT_EQ(s.at("gpu1/util_ratio_max"), 1);
  EXPECT_EQ(s.size(), 7u);
}

TEST(RowScalars, EveryMaxTagIsOfAGaugeThatKeepsAMax) {
  for (auto defs : {SampleMetrics(), GpuMetrics()}) {
    for (const MetricDef& m : defs) {
      if (TensorBoardKeepsMax(m)) {
        EXPECT_TRUE(m.keep_max && m.kind == Kind::kGauge) << m.name;
      }
    }
  }
}

TEST(TensorBoardTag, BytesBecomeMib) {
  const MetricDef& m = SampleMetrics()[IndexOf(SampleMetrics(), Scope::kHost, "memory_used_bytes")];
  EXPECT_EQ(TensorBoardTag(m), "system/memory_used_mib");
  const MetricDef& g = GpuMetrics()[IndexOf(GpuMetrics(), Scope::kGpu, "job_memory_bytes")];
  EXPECT_EQ(TensorBoardTag(g, 2), "gpu2/job_memory_mib");
  const MetricDef& r =
      SampleMetrics()[IndexOf(SampleMetrics(), Scope::kJob, "read_bytes_per_second")];
  EXPECT_EQ(TensorBoardTag(r), "job/read_bytes_per_second");
}

Row At(double elapsed) {
  Row row;
  row.elapsed_s = elapsed;
  return row;
}

TEST(TbStepper, SecondsRoundedToIntervalsStrictlyIncreasing) {
  TbStepper two(2);
  EXPECT_EQ(two.Next(At(2.01)), 2);
  EXPECT_EQ(two.Next(At(3.98)), 4);
  EXPECT_EQ(two.Next(At(4.3)), 5);  // final partial row: never repeats a step
  TbStepper fast(0.25);
  EXPECT_EQ(fast.Next(At(0.25)), 0);
  EXPECT_EQ(fast.Next(At(0.5)), 1);
  EXPECT_EQ(fast.Next(At(0.75)), 2);
  EXPECT_EQ(fast.Next(At(1.0)), 3);
  EXPECT_EQ(fast.Next(At(5.0)), 5);
}

Row AtStep(double elapsed, std::optional<double> step, std::optional<double> steps) {
  Row row = At(elapsed);
  row.values.resize(SampleMetrics().size());
  if (step)
    row.values[IndexOf(SampleMetrics(), Scope::kTraining, "step")] = Stat{*step, *step, *step, 1};
  if (steps) {
    row.values[IndexOf(SampleMetrics(), Scope::kTraining, "steps")] =
        Stat{*steps, *steps, *steps, 1};
  }
  return row;
}

TEST(TbStepper, FollowsTheTrainingsGlobalStepOnceItGivesOne) {
  TbStepper s(1);
  EXPECT_EQ(s.Next(At(1.0)), 1);  // before the first step marker: seconds
  EXPECT_EQ(s.Next(AtStep(2.0, 120, 120)), 120);
  EXPECT_EQ(s.Next(AtStep(3.0, 120, 120)), std::nullopt);  // no progress (evaluation): not written
  EXPECT_EQ(s.Next(AtStep(4.0, 250, 250)), 250);
  EXPECT_EQ(s.Next(AtStep(5.0, 1000, 130)), 1000);  // numbers given win over the count
  TbStepper counted(1);
  EXPECT_EQ(counted.Next(AtStep(1.0, std::nullopt, 40)), 40);  // steps counted, not numbered
}

}  // namespace
}  // namespace tv::row_scalars_test

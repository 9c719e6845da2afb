#include "analysis/gpu_pick.h"

#include <gtest/gtest.h>

namespace tv::gpu_pick_test {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

GpuCandidate Gpu(int index, double free_gib, std::optional<double> busy, int processes = 0) {
  GpuCandidate c;
  c.index = index;
  c.uuid = "GPU-" + std::to_string(index);
  c.memory_total_bytes = 80 * kGiB;
  c.memory_free_bytes = free_gib * kGiB;
  c.busy_ratio = busy;
  c.processes = processes;
  return c;
}

GpuCandidate Slice(int index, int instance, double free_gib, int processes) {
  GpuCandidate c = Gpu(index, free_gib, std::nullopt, processes);
  c.mig_instance = instance;
  c.uuid = "MIG-" + std::to_string(index) + "-" + std::to_string(instance);
  c.memory_total_bytes = 20 * kGiB;
  return c;
}

TEST(PickGpus, FreeMeansMemoryFreeAndTimeIdleTogether) {
  // An idle GPU whose memory someone holds is not free; a lightly used empty one is.
  PickResult r = PickGpus({Gpu(0, 8, 0.90, 1), Gpu(1, 5, 0.0), Gpu(2, 79, 0.0), Gpu(3, 78, 0.12)},
                          PickRules{2, 0, 1.0});
  ASSERT_EQ(r.chosen.size(), 2u);
  EXPECT_EQ(VisibleDevices(r.chosen), "2,3");
  EXPECT_EQ(r.rejected, (std::vector<std::string>{"GPU 1: qualifies, but others are freer",
                                                  "GPU 0: qualifies, but others are freer"}));
}

TEST(PickGpus, MemoryAndBusyLimitsSayWhyAGpuIsLeftOut) {
  PickResult r = PickGpus({Gpu(0, 70, 0.90, 1), Gpu(1, 5.5, 0.0), Gpu(2, 30, std::nullopt, 2)},
                          PickRules{1, 16 * kGiB, 0.1});
  EXPECT_TRUE(r.chosen.empty());
  EXPECT_EQ(r.rejected, (std::vector<std::string>{
                            "GPU 0: 90 % busy, over 10 %",
                            "GPU 1: 5.5 GiB free, under 16.0 GiB",
                            "GPU 2: how busy it is could not be read",
                        }));
}

TEST(PickGpus, AMigSliceIsPickedByUuidAndOnlyAlone) {
  std::vector<GpuCandidate> gpus = {Gpu(0, 10, 0.95, 1), Slice(1, 1, 2, 1), Slice(1, 2, 19, 0)};
  PickResult one = PickGpus(gpus, PickRules{1, 4 * kGiB, 0.2});
  ASSERT_EQ(one.chosen.size(), 1u);
  EXPECT_EQ(VisibleDevices(one.chosen), "MIG-1-2");  // no process on it: idle
  PickResult two = PickGpus(gpus, PickRules{2, 0, 1.0});
  EXPECT_EQ(VisibleDevices(two.chosen), "0");
  EXPECT_EQ(two.rejected[0], "GPU 1 MIG 1 (MIG-1-1): a CUDA process sees one MIG slice at most");
}

}  // namespace
}  // namespace tv::gpu_pick_test

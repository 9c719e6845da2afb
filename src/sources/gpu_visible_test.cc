#include "sources/gpu_visible.h"

#include <gtest/gtest.h>

namespace tv::gpu_visible_test {
namespace {

std::vector<GpuIdentity> Gpus() {
  return {GpuIdentity{"GPU-8f3c1111-aaaa", {}},
          GpuIdentity{"GPU-8f3c2222-bbbb", {{"MIG-aa11", 1}, {"MIG-bb22", 2}}},
          GpuIdentity{"GPU-1234-cccc", {}}};
}

std::vector<std::pair<int, int>> Resolve(std::optional<std::string_view> cvd) {
  std::vector<std::pair<int, int>> out;
  for (const VisibleDevice& d : ResolveVisibleDevices(cvd, Gpus())) {
    out.emplace_back(d.physical_index, d.mig_instance);
  }
  return out;
}

using P = std::vector<std::pair<int, int>>;

TEST(VisibleDevices, UnsetMeansAllInLibraryOrder) {
  EXPECT_EQ(Resolve(std::nullopt), (P{{0, -1}, {1, -1}, {2, -1}}));
}

TEST(VisibleDevices, EmptyHidesEverything) { EXPECT_TRUE(Resolve("").empty()); }

TEST(VisibleDevices, OrdinalsRenumber) {
  auto devs = ResolveVisibleDevices("2,0", Gpus());
  ASSERT_EQ(devs.size(), 2u);
  EXPECT_EQ(devs[0].cuda_index, 0);
  EXPECT_EQ(devs[0].physical_index, 2);
  EXPECT_EQ(devs[1].cuda_index, 1);
  EXPECT_EQ(devs[1].physical_index, 0);
}

TEST(VisibleDevices, UuidPrefixesMustBeUnique) {
  EXPECT_EQ(Resolve("GPU-1234"), (P{{2, -1}}));
  EXPECT_TRUE(Resolve("GPU-8f3c").empty());  // ambiguous
  EXPECT_EQ(Resolve(" GPU-8f3c2 , 0"), (P{{1, -1}, {0, -1}}));
}

TEST(VisibleDevices, MigUuidsOldAndNew) {
  EXPECT_EQ(Resolve("MIG-bb22"), (P{{1, 2}}));
  EXPECT_EQ(Resolve("MIG-GPU-8f3c2222-bbbb/1/0"), (P{{1, 1}}));
}

TEST(VisibleDevices, InvalidOrRepeatedEntryEndsTheList) {
  EXPECT_EQ(Resolve("1,7,0"), (P{{1, -1}}));
  EXPECT_EQ(Resolve("0,0,1"), (P{{0, -1}}));
  EXPECT_EQ(Resolve("1,-1,0"), (P{{1, -1}}));
  EXPECT_TRUE(Resolve("GPU-nothing").empty());
}

}  // namespace
}  // namespace tv::gpu_visible_test

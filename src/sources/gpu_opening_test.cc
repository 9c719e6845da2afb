// The GPU driver opened on a thread of its own: the answer, once, to whoever
// waits; a waiter that gives up gets nothing and is not held.
#include "sources/gpu_opening.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace tv {
namespace {

// InFlight() once the opening threads of this test are done.
int SettledInFlight() {
  for (int i = 0; i < 500 && GpuOpening::InFlight() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return GpuOpening::InFlight();
}

#ifdef FAKE_NVML_PATH

TEST(GpuOpening, AnswersWithTheSourceOnce) {
  std::string path = ::testing::TempDir() + "gpu_opening_" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << R"({"devices": [{"uuid": "GPU-open-0"}]})";
  setenv("FAKE_NVML_SCENARIO", path.c_str(), 1);
  GpuSourceOptions options;
  options.nvml_library = FAKE_NVML_PATH;
  auto opening = GpuOpening::Start(options);
  int asked = 0;
  EXPECT_TRUE(opening->Wait([&] { return ++asked > 5000; }));  // 10 s at most
  std::vector<Notice> notices;
  std::unique_ptr<GpuSource> source = opening->Take(&notices);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->gpus().size(), 1u);
  EXPECT_TRUE(notices.empty());
  EXPECT_EQ(opening->Take(&notices), nullptr);  // once
  source.reset();
  opening.reset();
  EXPECT_EQ(SettledInFlight(), 0);
  unsetenv("FAKE_NVML_SCENARIO");
}

#endif  // FAKE_NVML_PATH

TEST(GpuOpening, NoDriverIsANoticeNotASource) {
  GpuSourceOptions options;
  options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  auto opening = GpuOpening::Start(options);
  EXPECT_TRUE(opening->Wait([] { return false; }));
  std::vector<Notice> notices;
  EXPECT_EQ(opening->Take(&notices), nullptr);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].source, "nvml");
  EXPECT_EQ(SettledInFlight(), 0);
}

TEST(GpuOpening, AWaiterThatGivesUpAtOnceIsNotHeld) {
  GpuSourceOptions options;
  options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  auto opening = GpuOpening::Start(options);
  // Whether the driver answered first or not, the wait returns at once.
  auto started = std::chrono::steady_clock::now();
  opening->Wait([] { return true; });
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
  opening.reset();  // the thread keeps its own reference until it is done
  EXPECT_EQ(SettledInFlight(), 0);
}

}  // namespace
}  // namespace tv

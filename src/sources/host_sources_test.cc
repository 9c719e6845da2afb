#include "sources/host_sources.h"

#include <gtest/gtest.h>

#include "core/sampler.h"

namespace tv::host_sources_test {
namespace {

TEST(HostSources, CgroupRunsAfterCpuAndMemorySoItCanLowerTheirLimits) {
  MemEnv env;
  std::vector<std::unique_ptr<Source>> sources = MakeHostSources(&env, 1);
  std::vector<std::string_view> names;
  names.reserve(sources.size());
  for (const auto& s : sources) names.push_back(s->name());
  ASSERT_EQ(names.size(), 7u);
  EXPECT_EQ(names[0], "host_cpu");
  EXPECT_EQ(names[1], "host_memory");
  EXPECT_EQ(names[2], "cgroup");
}

TEST(HostSources, EmptyFileSystemGivesNoticesNotValuesOrExceptions) {
  MemEnv env;
  std::vector<Notice> notices;
  Sample s;
  for (auto& source : MakeHostSources(&env, 1)) {
    source->Read({.mono_s = 1, .row_tick = true}, &s, &notices);
  }
  EXPECT_FALSE(s.host.cpu_limit_cores);
  EXPECT_FALSE(s.host.memory_total_bytes);
  EXPECT_GE(notices.size(), 5u);
}

// Reads the machine the tests run on through the real Env: nothing may throw and
// the always-present files give values.
TEST(HostSources, ReadThisMachine) {
  std::vector<std::unique_ptr<Source>> sources = MakeHostSources(Env::Default(), 0);
  std::vector<Notice> notices;
  Sample s;
  for (int i = 0; i < 3; ++i) {
    s = Sample{};
    Tick tick{.mono_s = 0.5 * (i + 1), .row_tick = true};
    for (auto& source : sources) source->Read(tick, &s, &notices);
    DeriveRatios(&s);
  }
  EXPECT_TRUE(s.host.memory_total_bytes);
  EXPECT_TRUE(s.host.cpu_limit_cores);
  EXPECT_GT(*s.host.cpu_limit_cores, 0);
}

}  // namespace
}  // namespace tv::host_sources_test

#include "sources/host_memory.h"

#include <gtest/gtest.h>

#include "sources/fixture.h"

namespace tv::host_memory_test {
namespace {

using test_fixtures::Fixture;

TEST(MemInfo, ParsesFieldsInBytes) {
  MemInfo m = ParseMemInfo(Fixture("proc/meminfo"));
  EXPECT_EQ(m.mem_total_bytes, 65759036ull * 1024);
  EXPECT_EQ(m.mem_free_bytes, 20563936ull * 1024);
  EXPECT_EQ(m.mem_available_bytes, 48925164ull * 1024);
  EXPECT_EQ(m.swap_total_bytes, 8388604ull * 1024);
  EXPECT_EQ(m.swap_free_bytes, 8126460ull * 1024);
}

TEST(MemInfo, OlderKernelWithoutMemAvailableLeavesItAbsent) {
  MemInfo m = ParseMemInfo("MemTotal: 1000 kB\nMemFree: 10 kB\n");
  EXPECT_EQ(m.mem_total_bytes, 1024000u);
  EXPECT_FALSE(m.mem_available_bytes);
  EXPECT_FALSE(m.swap_total_bytes);
}

TEST(MemInfo, HugeAndMalformedValuesAreAbsent) {
  MemInfo m = ParseMemInfo(
      "MemTotal: 18446744073709551615 kB\n"  // overflows once in bytes
      "MemFree: -5 kB\n"
      "MemAvailable: 12 MB\n"  // unknown unit
      "SwapTotal: 12 kB extra\n"
      "garbage line without colon\n"
      "SwapFree:\n");
  EXPECT_FALSE(m.mem_total_bytes);
  EXPECT_FALSE(m.mem_free_bytes);
  EXPECT_FALSE(m.mem_available_bytes);
  EXPECT_FALSE(m.swap_total_bytes);
  EXPECT_FALSE(m.swap_free_bytes);
}

TEST(MemInfo, EmptyTextGivesNothing) {
  MemInfo m = ParseMemInfo("");
  EXPECT_FALSE(m.mem_total_bytes);
}

TEST(HostMemorySource, FillsUsedAsTotalMinusAvailable) {
  MemEnv env;
  env.Set("/proc/meminfo", Fixture("proc/meminfo"));
  HostMemorySource source(&env);
  Sample s;
  std::vector<Notice> notices;
  source.Read({}, &s, &notices);
  EXPECT_EQ(s.host.memory_total_bytes, 65759036.0 * 1024);
  EXPECT_EQ(s.host.memory_available_bytes, 48925164.0 * 1024);
  EXPECT_EQ(s.host.memory_used_bytes, (65759036.0 - 48925164.0) * 1024);
  EXPECT_EQ(s.host.swap_total_bytes, 8388604.0 * 1024);
  EXPECT_EQ(s.host.swap_used_bytes, (8388604.0 - 8126460.0) * 1024);
  EXPECT_TRUE(notices.empty());
}

TEST(HostMemorySource, AvailableAboveTotalGivesNoUsedRatherThanNegative) {
  MemEnv env;
  env.Set("/proc/meminfo", "MemTotal: 10 kB\nMemAvailable: 20 kB\nSwapTotal: 0 kB\n");
  HostMemorySource source(&env);
  Sample s;
  std::vector<Notice> notices;
  source.Read({}, &s, &notices);
  EXPECT_EQ(s.host.memory_total_bytes, 10240.0);
  EXPECT_FALSE(s.host.memory_used_bytes);
  EXPECT_EQ(s.host.swap_total_bytes, 0.0);
  EXPECT_FALSE(s.host.swap_used_bytes);  // SwapFree missing
}

TEST(HostMemorySource, UnreadableFileIsNoticedOnce) {
  MemEnv env;
  env.Deny("/proc/meminfo");
  HostMemorySource source(&env);
  Sample s;
  std::vector<Notice> notices;
  source.Read({}, &s, &notices);
  source.Read({}, &s, &notices);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_FALSE(s.host.memory_total_bytes);
}

TEST(HostMemorySource, BetweenRowsOnlyTheTotalsAreSaidAsLastRead) {
  MemEnv env;
  env.Set("/proc/meminfo", Fixture("proc/meminfo"));
  HostMemorySource source(&env);
  std::vector<Notice> notices;
  Sample first;
  source.Read({}, &first, &notices);  // the first tick reads
  EXPECT_TRUE(first.host.memory_used_bytes);
  env.Set("/proc/meminfo", "MemTotal: 10 kB\nMemAvailable: 5 kB\nSwapTotal: 0 kB\n");
  Sample between;
  source.Read({}, &between, &notices);
  EXPECT_EQ(between.host.memory_total_bytes, 65759036.0 * 1024);
  EXPECT_EQ(between.host.swap_total_bytes, 8388604.0 * 1024);
  EXPECT_FALSE(between.host.memory_used_bytes);
  EXPECT_FALSE(between.host.memory_available_bytes);
  EXPECT_FALSE(between.host.swap_used_bytes);
  Sample row;
  source.Read({.row_tick = true}, &row, &notices);
  EXPECT_EQ(row.host.memory_total_bytes, 10240.0);
  EXPECT_EQ(row.host.memory_used_bytes, 5120.0);
  Sample after_row;
  EXPECT_FALSE(source.Flush(&after_row));  // the last row has its figures
  source.Read({}, &between, &notices);
  env.Set("/proc/meminfo", "MemTotal: 10 kB\nMemAvailable: 2 kB\nSwapTotal: 0 kB\n");
  ASSERT_TRUE(source.Flush(&between));  // stopped between rows: read once more
  EXPECT_EQ(between.host.memory_used_bytes, 8192.0);
}

}  // namespace
}  // namespace tv::host_memory_test

#include "sources/disks.h"

#include <gtest/gtest.h>

#include "sources/fixture.h"

namespace tv::disks_test {
namespace {

using test_fixtures::Fixture;

TEST(DiskStats, ParsesNameAndSectorCounters) {
  std::string text = Fixture("proc/diskstats_t0");  // the parsed names point into it
  std::vector<DiskStat> d = ParseDiskStats(text);
  ASSERT_EQ(d.size(), 11u);
  EXPECT_EQ(d[2].name, "nvme0n1");
  EXPECT_EQ(d[2].sectors_read, 38262866u);
  EXPECT_EQ(d[2].sectors_written, 95264722u);
}

TEST(DiskStats, SkipsShortAndGarbageLines) {
  std::vector<DiskStat> d = ParseDiskStats(
      "   8       1 sda1 1979 125904 120 3456\n"  // pre-2.6.25 partition line: 4 counters
      "   8       0 sda 1 2 x 4 5 6 7 8 9 10 11\n"
      "   8       0 sdb 1 2 -3 4 5 6 7 8 9 10 11\n"
      "garbage\n"
      "\n"
      "   8      16 sdc 1 2 18446744073709551615 4 5 6 18446744073709551615 8 9 10 11\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].name, "sdc");
  EXPECT_EQ(d[0].sectors_read, UINT64_MAX);
}

TEST(DiskStats, VirtualDevicesAreRecognised) {
  EXPECT_TRUE(IsVirtualDisk("loop0"));
  EXPECT_TRUE(IsVirtualDisk("ram1"));
  EXPECT_TRUE(IsVirtualDisk("zram0"));
  EXPECT_TRUE(IsVirtualDisk("dm-3"));
  EXPECT_TRUE(IsVirtualDisk("md127"));
  EXPECT_FALSE(IsVirtualDisk("sda"));
  EXPECT_FALSE(IsVirtualDisk("nvme0n1"));
  EXPECT_FALSE(IsVirtualDisk("vda"));
  EXPECT_EQ(SysBlockName("cciss/c0d0"), "cciss!c0d0");
}

class DisksSourceTest : public ::testing::Test {
 protected:
  DisksSourceTest() {
    for (const char* d : {"loop0", "loop1", "nvme0n1", "sda", "dm-0", "md0", "zram0", "sr0"}) {
      env_.Set(std::string("/sys/block/") + d + "/size", "0\n");
    }
  }
  Sample Row(double t) {
    Sample s;
    source_.Read({.mono_s = t, .row_tick = true}, &s, &notices_);
    return s;
  }
  MemEnv env_;
  DisksSource source_{&env_};
  std::vector<Notice> notices_;
};

TEST_F(DisksSourceTest, SumsWholeDisksOnlyOverTheRow) {
  env_.Set("/proc/diskstats", Fixture("proc/diskstats_t0"));
  Sample s = Row(1.0);
  EXPECT_FALSE(s.host.disk_read_bytes_per_second);
  env_.Set("/proc/diskstats", Fixture("proc/diskstats_t1"));
  s = Row(3.0);
  // nvme0n1 +2048 and sda +1024 sectors read, nvme0n1 +4096 written, over 2 s;
  // its partition, loop1 and dm-0 moved too but are not counted.
  EXPECT_DOUBLE_EQ(*s.host.disk_read_bytes_per_second, 3072.0 * 512 / 2);
  EXPECT_DOUBLE_EQ(*s.host.disk_write_bytes_per_second, 4096.0 * 512 / 2);
  EXPECT_TRUE(notices_.empty());
}

TEST_F(DisksSourceTest, ReadsOnRowTicksOnly) {
  env_.Set("/proc/diskstats", Fixture("proc/diskstats_t0"));
  Row(1.0);
  env_.Set("/proc/diskstats", Fixture("proc/diskstats_t1"));
  Sample s;
  source_.Read({.mono_s = 1.1, .row_tick = false}, &s, &notices_);
  EXPECT_FALSE(s.host.disk_read_bytes_per_second);
}

TEST_F(DisksSourceTest, ClassifiesEachNameOnceNotEveryRow) {
  env_.Set("/proc/diskstats", Fixture("proc/diskstats_t0"));
  Row(1.0);
  // sda leaves /sys/block but keeps its first classification.
  env_.Remove("/sys/block/sda/size");
  env_.Set("/proc/diskstats", Fixture("proc/diskstats_t1"));
  Sample s = Row(2.0);
  EXPECT_DOUBLE_EQ(*s.host.disk_read_bytes_per_second, 3072.0 * 512);
}

TEST_F(DisksSourceTest, NewDiskIsPickedUpAndCountsFromItsSecondRow) {
  env_.Set("/proc/diskstats", "8 0 sda 0 0 0 0 0 0 0 0 0 0 0\n");
  Row(1.0);
  env_.Set("/sys/block/sdb/size", "0\n");
  env_.Set("/proc/diskstats", "8 0 sda 0 0 2 0 0 0 0 0 0 0 0\n8 16 sdb 0 0 100 0 0 0 0 0 0 0 0\n");
  Sample s = Row(2.0);
  EXPECT_DOUBLE_EQ(*s.host.disk_read_bytes_per_second, 2.0 * 512);
  env_.Set("/proc/diskstats", "8 0 sda 0 0 2 0 0 0 0 0 0 0 0\n8 16 sdb 0 0 104 0 0 0 0 0 0 0 0\n");
  s = Row(3.0);
  EXPECT_DOUBLE_EQ(*s.host.disk_read_bytes_per_second, 4.0 * 512);
}

TEST_F(DisksSourceTest, CounterGoingBackwardsGivesNoNegativeRate) {
  env_.Set("/proc/diskstats", "8 0 sda 0 0 1000 0 0 0 0 0 0 0 0\n");
  Row(1.0);
  env_.Set("/proc/diskstats", "8 0 sda 0 0 10 0 0 0 0 0 0 0 0\n");
  Sample s = Row(2.0);
  EXPECT_FALSE(s.host.disk_read_bytes_per_second);
  env_.Set("/proc/diskstats", "8 0 sda 0 0 20 0 0 0 0 0 0 0 0\n");
  s = Row(3.0);
  EXPECT_DOUBLE_EQ(*s.host.disk_read_bytes_per_second, 10.0 * 512);
}

TEST_F(DisksSourceTest, EmptyFileGivesNoRate) {
  env_.Set("/proc/diskstats", "");
  Row(1.0);
  Sample s = Row(2.0);
  EXPECT_FALSE(s.host.disk_read_bytes_per_second);
  EXPECT_TRUE(notices_.empty());
}

TEST(DisksSource, MissingSysBlockIsNoticedOnceAndCountsNothing) {
  MemEnv env;
  env.Set("/proc/diskstats", "8 0 sda 0 0 0 0 0 0 0 0 0 0 0\n8 1 sda1 0 0 0 0 0 0 0 0 0 0 0\n");
  DisksSource source(&env);
  std::vector<Notice> notices;
  Sample s;
  source.Read({.mono_s = 1, .row_tick = true}, &s, &notices);
  source.Read({.mono_s = 2, .row_tick = true}, &s, &notices);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].message.find("/sys/block"), std::string::npos);
  EXPECT_FALSE(s.host.disk_read_bytes_per_second);
}

}  // namespace
}  // namespace tv::disks_test

#include "run/proc_locks.h"

#include <gtest/gtest.h>

namespace tv::proc_locks_test {
namespace {

constexpr std::string_view kText =
    "1: POSIX  ADVISORY  WRITE 811 00:1a:1204 0 EOF\n"
    "2: FLOCK  ADVISORY  READ 4100 fe:00:9978714 0 EOF\n"
    "3: FLOCK  ADVISORY  WRITE 4242 fe:00:9978714 0 EOF\n"
    "3: -> FLOCK  ADVISORY  WRITE 5151 fe:00:9978714 0 EOF\n"
    "4: OFDLCK ADVISORY  READ  -1 08:02:12 0 EOF\n"
    "5: FLOCK  ADVISORY  WRITE 777 103:11:12 0 EOF\n";

TEST(ProcLocks, ParsesEveryFieldWithHexDevicesAndDecimalInodes) {
  std::vector<ProcLock> locks = ParseProcLocks(kText);
  ASSERT_EQ(locks.size(), 6u);
  EXPECT_EQ(locks[0].type, "POSIX");
  EXPECT_EQ(locks[0].minor, 0x1au);
  EXPECT_EQ(locks[2].pid, 4242);
  EXPECT_TRUE(locks[2].write);
  EXPECT_EQ(locks[2].major, 0xfeu);
  EXPECT_EQ(locks[2].inode, 9978714u);
  EXPECT_TRUE(locks[3].waiting);
  EXPECT_EQ(locks[3].pid, 5151);
  EXPECT_EQ(locks[4].pid, -1);
  EXPECT_EQ(locks[5].major, 0x103u);
  EXPECT_EQ(locks[5].minor, 0x11u);
}

TEST(ProcLocks, TheExclusiveHolderNotAWaiterNorAnotherFile) {
  std::vector<ProcLock> locks = ParseProcLocks(kText);
  EXPECT_EQ(FlockHolder(locks, 0xfe, 0, 9978714), 4242);
  EXPECT_EQ(FlockHolder(locks, 0xfe, 0, 9978715), std::nullopt);
  EXPECT_EQ(FlockHolder(locks, 0xfe, 1, 9978714), std::nullopt);
  // A POSIX lock is not an flock.
  EXPECT_EQ(FlockHolder(locks, 0, 0x1a, 1204), std::nullopt);
}

TEST(ProcLocks, ASharedHolderWhenNoneIsExclusive) {
  std::vector<ProcLock> locks = ParseProcLocks("9: FLOCK ADVISORY READ 31 08:01:5 0 EOF\n");
  EXPECT_EQ(FlockHolder(locks, 8, 1, 5), 31);
}

TEST(ProcLocks, SkipsMalformedLines) {
  std::vector<ProcLock> locks = ParseProcLocks(
      "garbage\n"
      "1: FLOCK ADVISORY WRITE x 08:01:5 0 EOF\n"
      "2: FLOCK ADVISORY WRITE 12 08:01 0 EOF\n"
      "3: FLOCK ADVISORY SOMETIMES 12 08:01:5 0 EOF\n"
      "\n"
      "4: FLOCK ADVISORY WRITE 13 08:01:5 0 EOF");
  ASSERT_EQ(locks.size(), 1u);
  EXPECT_EQ(locks[0].pid, 13);
}

}  // namespace
}  // namespace tv::proc_locks_test

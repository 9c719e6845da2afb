// What the tree uses: CPU, RSS, PSS-based memory and its pacing, I/O rates.
#include <gtest/gtest.h>

#include "sources/process_tree.h"
#include "sources/process_tree_testing.h"

namespace tv::process_tree_usage_test {
namespace {

using testing::FakeProc;
using testing::kMiB;
using testing::TestOptions;
using testing::Ticker;

TEST(ProcessTree, CpuCoresFromTickDeltas) {
  FakeProc fs;
  fs.Add(100, 1, "python").cpu_ticks = 1000;
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  EXPECT_FALSE(t.At(0).cpu_cores);
  fs[100].cpu_ticks = 1015;  // 0.15 s of CPU in 0.1 s
  fs.Publish();
  EXPECT_DOUBLE_EQ(*t.At(0.1).cpu_cores, 1.5);
  fs[100].cpu_ticks = 1025;
  fs.Add(101, 100, "worker").cpu_ticks = 5;  // forked since: all its time is this tick's
  fs.Publish();
  EXPECT_DOUBLE_EQ(*t.At(0.2).cpu_cores, 1.5);
  fs[100].cpu_ticks = 1035;
  fs[101].cpu_ticks = 15;
  fs.Publish();
  EXPECT_DOUBLE_EQ(*t.At(0.3).cpu_cores, 2.0);
}

TEST(ProcessTree, MemoryCountsSharedPagesOnceUnlikeRss) {
  // A 200 MiB parent forks two workers that share its pages and add 100 MiB each.
  FakeProc fs;
  auto& parent = fs.Add(100, 1, "python");
  parent.rss_bytes = 200 * kMiB;
  parent.pss_bytes = 200 * kMiB / 3;
  for (int pid : {101, 102}) {
    auto& w = fs.Add(pid, 100, "worker");
    w.rss_bytes = 300 * kMiB;
    w.pss_bytes = 200 * kMiB / 3 + 100 * kMiB;
  }
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  const JobSample& job = t.At(0);
  EXPECT_EQ(*job.rss_bytes, 800 * kMiB);
  EXPECT_NEAR(*job.memory_bytes, 400 * kMiB, 1024 * 3);

  // Between rounds, RSS changes are added to the last PSS.
  fs[101].rss_bytes += 50 * kMiB;
  fs.Publish();
  const JobSample& job2 = t.At(0.1);
  EXPECT_EQ(*job2.rss_bytes, 850 * kMiB);
  EXPECT_NEAR(*job2.memory_bytes, 450 * kMiB, 1024 * 3);
}

TEST(ProcessTree, PssPacingFollowsMembershipAndCost) {
  FakeProc fs;
  auto& root = fs.Add(100, 1, "python");
  root.rss_bytes = 100 * kMiB;
  root.pss_bytes = 10 * kMiB;
  fs.Publish();
  ProcessTreeOptions o = TestOptions();
  double cpu = 0;
  o.cpu_seconds = [&cpu] { return cpu += 0.0002; };  // each round costs 0.2 ms -> every 1 s
  o.pss.max_periodic_s = 30;
  o.pss.burst_cpu_s = 0;  // no burst: changes wait for min_spacing_s
  ProcessTreeSource src(&fs.env, {100}, o);
  Ticker t{&src};
  EXPECT_EQ(*t.At(0).memory_bytes, 10 * kMiB);
  fs[100].pss_bytes = 20 * kMiB;  // PSS moves without RSS moving: only a round sees it
  fs.Publish();
  EXPECT_EQ(*t.At(0.9).memory_bytes, 10 * kMiB);
  EXPECT_EQ(*t.At(1.0).memory_bytes, 20 * kMiB);

  // A new worker triggers a round 0.5 s after the last one; until then, a fork
  // of a member with PSS, it counts nothing (its pages are its parent's).
  fs.Add(101, 100, "worker").rss_bytes = 8 * kMiB;
  fs[101].pss_bytes = 2 * kMiB;
  fs.Publish();
  EXPECT_EQ(*t.At(1.2).memory_bytes, 20 * kMiB);
  EXPECT_EQ(*t.At(1.2).rss_bytes, 100 * kMiB + 8 * kMiB);
  EXPECT_EQ(*t.At(1.5).memory_bytes, 20 * kMiB + 2 * kMiB);
}

TEST(ProcessTree, NewWorkerIsReadAtOnceSoSharedPagesAreNeverCountedTwice) {
  FakeProc fs;
  auto& root = fs.Add(100, 1, "python");
  root.rss_bytes = 200 * kMiB;
  root.pss_bytes = 200 * kMiB;
  fs.Publish();
  ProcessTreeOptions o = TestOptions();
  double cpu = 0;
  o.cpu_seconds = [&cpu] { return cpu += 0.004; };  // 4 ms per round
  ProcessTreeSource src(&fs.env, {100}, o);
  Ticker t{&src};
  EXPECT_EQ(*t.At(0).memory_bytes, 200 * kMiB);
  // Fork: the worker's RSS is the parent's pages; PSS splits them.
  fs.Add(101, 100, "worker").rss_bytes = 200 * kMiB;
  fs[101].pss_bytes = 100 * kMiB;
  fs[100].pss_bytes = 100 * kMiB;
  fs.Publish();
  EXPECT_EQ(*t.At(0.1).memory_bytes, 200 * kMiB);
  EXPECT_EQ(*t.At(0.1).rss_bytes, 400 * kMiB);
}

// Library pages shared with processes outside the job: as those exit, the
// job's share of them (its PSS) grows; its anonymous part does not.
TEST(ProcessTree, TheAnonymousPartStaysPutWhenOutsideSharersOfItsLibrariesLeave) {
  FakeProc fs;
  auto& root = fs.Add(100, 1, "python");
  root.rss_bytes = 240 * kMiB;
  root.pss_bytes = 150 * kMiB;
  root.pss_anon_bytes = 120 * kMiB;
  auto& worker = fs.Add(101, 100, "python");
  worker.rss_bytes = 100 * kMiB;
  worker.pss_bytes = 30 * kMiB;
  worker.pss_anon_bytes = 20 * kMiB;
  fs.Publish();
  ProcessTreeOptions o = TestOptions();
  o.pss.settle_after_s = 1e9;
  ProcessTreeSource src(&fs.env, {100}, o);
  Ticker t{&src};
  const JobSample& first = t.At(0);
  EXPECT_EQ(first.memory_bytes, 180 * kMiB);
  EXPECT_EQ(first.memory_anon_pss_bytes, 140 * kMiB);
  fs[100].pss_bytes = 230 * kMiB;  // the others mapping torch exited
  fs[100].rss_bytes = 248 * kMiB;  // and the job took 8 MiB
  fs.Publish();
  const JobSample& between = t.At(0.5);  // no round: RSS changes are added to both
  EXPECT_EQ(between.memory_bytes, 188 * kMiB);
  EXPECT_EQ(between.memory_anon_pss_bytes, 148 * kMiB);
  fs[100].pss_anon_bytes = 128 * kMiB;
  fs.Publish();
  const JobSample& round = t.At(40);
  EXPECT_EQ(round.memory_bytes, 260 * kMiB);
  EXPECT_EQ(round.memory_anon_pss_bytes, 148 * kMiB);
  ASSERT_EQ(round.members.size(), 2u);  // each member's part, for its rank
  EXPECT_EQ(round.members[0].anon_pss_bytes, 128 * kMiB);
  EXPECT_EQ(round.members[1].anon_pss_bytes, 20 * kMiB);
}

TEST(ProcessTree, NoAnonymousPartWhereAReadingLacksIt) {
  FakeProc fs;
  fs.Add(100, 1, "python").pss_anon_bytes = 4 * kMiB;
  fs.Add(101, 100, "worker");  // its kernel line missing, as before Linux 5.10
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  EXPECT_TRUE(t.At(0).memory_bytes.has_value());
  EXPECT_FALSE(t.sample.job.memory_anon_pss_bytes.has_value());
}

TEST(ProcessTree, PssSpacingGrowsWithRoundCost) {
  FakeProc fs;
  fs.Add(100, 1, "python").pss_bytes = 4096;
  fs.Publish();
  ProcessTreeOptions o = TestOptions();
  double cpu = 0;
  o.cpu_seconds = [&cpu] { return cpu += 0.0004; };  // 0.4 ms per round -> every 2 s
  o.pss.settle_after_s = 1e9;                        // no settling round in the way
  ProcessTreeSource src(&fs.env, {100}, o);
  Ticker t{&src};
  t.At(0);
  fs[100].pss_bytes = 2 * 4096;
  fs.Publish();
  EXPECT_EQ(*t.At(1.9).memory_bytes, 4096);
  EXPECT_EQ(*t.At(2.0).memory_bytes, 2 * 4096);
}

TEST(ProcessTree, FallsBackToRssWhenPssIsDenied) {
  FakeProc fs;
  fs.Add(100, 1, "python").rss_bytes = 40 * kMiB;
  fs.Add(101, 100, "worker").rss_bytes = 10 * kMiB;
  fs.Publish();
  fs.env.Deny("/proc/100/smaps_rollup");
  fs.env.Deny("/proc/101/smaps_rollup");
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  EXPECT_EQ(*t.At(0).memory_bytes, 50 * kMiB);
  ASSERT_EQ(t.notices.size(), 1u);
  EXPECT_NE(t.notices[0].message.find("Permission denied"), std::string::npos);
  EXPECT_EQ(*t.At(5).memory_bytes, 50 * kMiB);
  EXPECT_TRUE(t.notices.empty());  // said once
}

TEST(ProcessTree, AMemberThatExitedBeforeItsPssWasReadIsNoReasonToSayPssIsUnavailable) {
  FakeProc fs;
  fs.Add(100, 1, "python").rss_bytes = 40 * kMiB;
  fs.Publish();
  fs.env.Remove("/proc/100/smaps_rollup");  // it exited between the tree and the PSS read
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  EXPECT_EQ(*t.At(0).memory_bytes, 40 * kMiB);
  EXPECT_TRUE(t.notices.empty());
}

TEST(ProcessTree, IoRatesOverTheRow) {
  FakeProc fs;
  fs.Add(100, 1, "python").read_bytes = 1000;
  fs.Add(101, 100, "worker").write_bytes = 5000;
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  EXPECT_FALSE(t.At(1, true).read_bytes_per_second);  // no previous row
  EXPECT_FALSE(t.At(1.5).read_bytes_per_second);      // not a row tick
  fs[100].read_bytes = 3000;
  fs[101].write_bytes = 6000;
  fs.Publish();
  const JobSample& job = t.At(2, true);
  EXPECT_DOUBLE_EQ(*job.read_bytes_per_second, 2000);
  EXPECT_DOUBLE_EQ(*job.write_bytes_per_second, 1000);

  // The worker leaves with its counters; a newcomer's past I/O is not this row's.
  fs.Kill(101);
  fs.Add(102, 100, "worker").write_bytes = 1'000'000;
  fs.Publish();
  const JobSample& job2 = t.At(3, true);
  EXPECT_DOUBLE_EQ(*job2.read_bytes_per_second, 0);
  EXPECT_DOUBLE_EQ(*job2.write_bytes_per_second, 0);
}

TEST(ProcessTree, IoOfOtherUsersIsLeftOutAndSaidOnce) {
  FakeProc fs;
  fs.Add(100, 1, "python");
  fs.Publish();
  fs.env.Deny("/proc/100/io");
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.At(1, true);
  EXPECT_EQ(t.notices.size(), 1u);
  EXPECT_FALSE(t.At(2, true).read_bytes_per_second);
  EXPECT_TRUE(t.notices.empty());
}

}  // namespace
}  // namespace tv::process_tree_usage_test

// CPU of children reaped between ticks, and PSS refreshed when memory is given back.
#include <gtest/gtest.h>

#include "sources/process_tree.h"
#include "sources/process_tree_testing.h"

namespace tv::process_tree_reaped_test {
namespace {

using testing::FakeProc;
using testing::kMiB;
using testing::TestOptions;
using testing::Ticker;

TEST(ProcessTreeReaped, ChildThatLivedBetweenTicksCountsThroughItsParent) {
  FakeProc fs;
  fs.Add(100, 1, "sh").cpu_ticks = 50;
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.At(0);
  // A child ran 8 ticks and was reaped before the next tick: never seen.
  fs[100].children_ticks += 8;
  fs.Publish();
  EXPECT_NEAR(*t.At(0.1).cpu_cores, 0.8, 1e-9);
}

TEST(ProcessTreeReaped, ChildSeenThenReapedCountsOnlyItsUnseenTail) {
  FakeProc fs;
  fs.Add(100, 1, "sh");
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.At(0);
  fs.Add(101, 100, "python").cpu_ticks = 4;
  fs.Publish();
  EXPECT_NEAR(*t.At(0.1).cpu_cores, 0.4, 1e-9);  // joined: all of its time
  fs[101].cpu_ticks = 10;
  fs[101].state = 'Z';  // exited, not yet reaped
  fs.Publish();
  EXPECT_NEAR(*t.At(0.2).cpu_cores, 0.6, 1e-9);
  fs.Reap(101);  // the parent's cutime grows by 10, all of it counted already
  fs.Publish();
  EXPECT_NEAR(*t.At(0.3).cpu_cores, 0, 1e-9);
  fs[100].cpu_ticks += 3;
  fs.Publish();
  EXPECT_NEAR(*t.At(0.4).cpu_cores, 0.3, 1e-9);
}

TEST(ProcessTreeReaped, SupervisorReapingTheRootCountsItsTailOnce) {
  FakeProc fs;
  fs.Add(7, 1, "trainvitals");  // the supervisor, not in the tree
  fs.Add(100, 7, "python").cpu_ticks = 20;
  fs.Publish();
  ProcessTreeOptions o = TestOptions();
  o.reaper_pid = 7;
  ProcessTreeSource src(&fs.env, {100}, o);
  Ticker t{&src};
  t.At(0);
  fs[100].cpu_ticks = 25;
  fs.Publish();
  EXPECT_NEAR(*t.At(0.1).cpu_cores, 0.5, 1e-9);
  fs[100].cpu_ticks = 28;  // 3 more ticks, then exit; the supervisor reaps it
  fs.Reap(100);
  fs.Publish();
  EXPECT_NEAR(*t.At(0.2).cpu_cores, 0.3, 1e-9);
}

TEST(ProcessTreeReaped, ReaperInTheTreeCountsAsAMemberOnly) {
  FakeProc fs;
  fs.Add(100, 1, "python");  // the in-process monitor: the reaper is the root
  fs.Add(101, 100, "tokenizer").cpu_ticks = 4;
  fs.Publish();
  ProcessTreeOptions o = TestOptions();
  o.reaper_pid = 100;
  ProcessTreeSource src(&fs.env, {100}, o);
  Ticker t{&src};
  t.At(0);
  fs[101].cpu_ticks = 6;
  fs.Reap(101);
  fs.Publish();
  EXPECT_NEAR(*t.At(0.1).cpu_cores, 0.2, 1e-9);
}

TEST(ProcessTreeReaped, OrphanReapedByTheSupervisorCountsItsTail) {
  FakeProc fs;
  fs.Add(7, 1, "trainvitals");
  fs.Add(100, 7, "python");
  fs.Add(101, 7, "orphan").cpu_ticks = 30;  // re-parented to the subreaper
  fs.Publish();
  ProcessTreeOptions o = TestOptions();
  o.reaper_pid = 7;
  ProcessTreeSource src(&fs.env, {100, 101}, o);
  Ticker t{&src};
  t.At(0);
  fs[101].cpu_ticks = 35;
  fs.Reap(101);  // 35 ticks enter the supervisor's cutime; 30 were the baseline
  fs.Publish();
  EXPECT_NEAR(*t.At(0.1).cpu_cores, 0.5, 1e-9);
}

TEST(ProcessTreeReaped, ReapingSeenBeforeTheExitIsCarriedNotLost) {
  FakeProc fs;
  fs.Add(100, 1, "sh");
  fs.Add(101, 100, "python").cpu_ticks = 10;
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.At(0);
  // The child is gone and its time not yet in the parent's (read in between).
  fs.Kill(101);
  fs.Publish();
  EXPECT_NEAR(*t.At(0.1).cpu_cores, 0, 1e-9);
  fs[100].children_ticks = 12;  // 10 seen, 2 unseen
  fs.Publish();
  EXPECT_NEAR(*t.At(0.2).cpu_cores, 0.2, 1e-9);
}

TEST(ProcessTreeReaped, ShortfallThatIsNeverMadeUpIsDropped) {
  FakeProc fs;
  fs.Add(100, 1, "daemon");  // ignores SIGCHLD: its children are reaped unaccounted
  fs.Add(101, 100, "child").cpu_ticks = 50;
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.At(0);
  fs.Kill(101);
  fs.Publish();
  double t_s = 0;
  for (int i = 0; i < 11; ++i) t.At(t_s += 0.1);
  fs[100].cpu_ticks += 5;
  fs.Publish();
  EXPECT_NEAR(*t.At(t_s += 0.1).cpu_cores, 0.5, 1e-9);
}

TEST(ProcessTreeReaped, ZombieChildAsksForAPssRoundAtOnce) {
  // A parent shares 300 MiB with a worker; the worker exits and stays a zombie.
  FakeProc fs;
  auto& parent = fs.Add(100, 1, "python");
  parent.rss_bytes = 300 * kMiB;
  parent.pss_bytes = 150 * kMiB;
  auto& worker = fs.Add(101, 100, "worker");
  worker.rss_bytes = 300 * kMiB;
  worker.pss_bytes = 150 * kMiB;
  fs.Publish();
  ProcessTreeOptions o = TestOptions();
  double cpu = 0;
  o.cpu_seconds = [&cpu] { return cpu += 0.0004; };  // periodic rounds 2 s apart
  o.pss.settle_after_s = 1e9;
  ProcessTreeSource src(&fs.env, {100}, o);
  Ticker t{&src};
  EXPECT_EQ(*t.At(0).memory_bytes, 300 * kMiB);
  fs[101].state = 'Z';
  fs[101].rss_bytes = 0;
  fs[101].pss_bytes = 0;
  fs[100].pss_bytes = 300 * kMiB;  // the parent now holds the pages alone
  fs.Publish();
  EXPECT_EQ(*t.At(0.6).memory_bytes, 300 * kMiB);
}

TEST(ProcessTreeReaped, SharpFallOfRssAsksForAPssRound) {
  FakeProc fs;
  auto& parent = fs.Add(100, 1, "python");
  parent.rss_bytes = 300 * kMiB;
  parent.pss_bytes = 100 * kMiB;
  for (int pid : {101, 102}) {
    auto& w = fs.Add(pid, 100, "worker");
    w.rss_bytes = 300 * kMiB;
    w.pss_bytes = 100 * kMiB;
  }
  fs.Publish();
  ProcessTreeOptions o = TestOptions();
  double cpu = 0;
  o.cpu_seconds = [&cpu] { return cpu += 0.0004; };
  o.pss.settle_after_s = 1e9;
  ProcessTreeSource src(&fs.env, {100}, o);
  Ticker t{&src};
  EXPECT_EQ(*t.At(0).memory_bytes, 300 * kMiB);
  // The workers unmap what they shared (still alive): the parent's PSS grows.
  for (int pid : {101, 102}) {
    fs[pid].rss_bytes = 4 * kMiB;
    fs[pid].pss_bytes = 4 * kMiB;
  }
  fs[100].pss_bytes = 300 * kMiB;
  fs.Publish();
  EXPECT_EQ(*t.At(0.6).memory_bytes, 308 * kMiB);
}

}  // namespace
}  // namespace tv::process_tree_reaped_test

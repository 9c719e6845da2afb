// Which processes form the job's tree, tick by tick.
#include "sources/process_tree.h"

#include <gtest/gtest.h>

#include "sources/process_tree_testing.h"

namespace tv::process_tree_test {
namespace {

using testing::FakeProc;
using testing::Pids;
using testing::TestOptions;
using testing::Ticker;

TEST(ProcessTree, FindsChildrenAndGrandchildren) {
  FakeProc fs;
  fs.Add(100, 1, "python");
  fs.Add(101, 100, "worker");
  fs.Add(102, 100, "worker");
  fs.Add(103, 101, "grandchild");
  fs.Add(200, 1, "unrelated");
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  const JobSample& job = t.At(0);
  EXPECT_EQ(job.processes, 4);
  EXPECT_EQ(job.threads, 4);
  EXPECT_EQ(job.rss_bytes, 4 * 4096);
  EXPECT_EQ(job.pids, (std::vector<int>{100, 101, 102, 103}));
  EXPECT_EQ(Pids(job.started), (std::vector<int>{100, 101, 102, 103}));
  EXPECT_FALSE(job.cpu_cores);  // no delta on the first tick
  EXPECT_TRUE(t.notices.empty());
}

TEST(ProcessTree, ChildVanishingBetweenListingAndReadingIsNormal) {
  FakeProc fs;
  fs.Add(100, 1, "python");
  fs.Add(101, 100, "worker");
  fs.Add(102, 100, "worker");
  fs.Publish();
  fs.env.Remove("/proc/102/stat");  // listed by its parent, gone before its stat is read
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  const JobSample& job = t.At(0, true);
  EXPECT_EQ(job.pids, (std::vector<int>{100, 101}));
  EXPECT_TRUE(t.notices.empty());
}

TEST(ProcessTree, ListedPidReusedBeforeItsStatIsReadIsNotAMember) {
  FakeProc fs;
  fs.Add(100, 1, "python");
  fs.Add(101, 100, "worker");
  fs.Publish();
  // 101 died and its PID went to a stranger between the listing and the stat read.
  fs.env.Set("/proc/101/stat", "101 (stranger) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 9 1 1 1\n");
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  EXPECT_EQ(t.At(0).pids, std::vector<int>{100});
}

TEST(ProcessTree, ReusedPidIsANewProcess) {
  FakeProc fs;
  fs.Add(100, 1, "python");
  fs.Add(101, 100, "worker", 500).cpu_ticks = 10;
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.At(0);
  fs.Kill(101);
  fs.Add(101, 100, "worker2", 900).cpu_ticks = 5000;  // same PID, later start
  fs.Publish();
  const JobSample& job = t.At(1);
  EXPECT_EQ(Pids(job.exited), std::vector<int>{101});
  EXPECT_EQ(job.exited[0].name, "worker");
  EXPECT_EQ(Pids(job.started), std::vector<int>{101});
  EXPECT_EQ(job.started[0].name, "worker2");
  // The newcomer's lifetime CPU is not all this tick's: at most a core per thread.
  EXPECT_EQ(job.cpu_cores, 1.0);

  // Reused by a process outside the tree: the member left, nobody joined.
  fs.Kill(101);
  fs.Publish();
  fs.Add(101, 1, "stranger", 1200);
  fs.Publish();
  const JobSample& job2 = t.At(2);
  EXPECT_EQ(Pids(job2.exited), std::vector<int>{101});
  EXPECT_TRUE(job2.started.empty());
  EXPECT_EQ(job2.pids, std::vector<int>{100});
}

TEST(ProcessTree, FindsChildOfANonMainThreadWithinTwoSeconds) {
  FakeProc fs;
  fs.Add(100, 1, "python").thread_children[105];  // a second thread, tid 105
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.At(0);
  fs.Add(110, 100, "loader");  // forked by thread 105: listed only in its children file
  fs[100].thread_children[100].clear();
  fs[100].thread_children[105] = {110};
  fs.Publish();
  double found_at = -1;
  for (int k = 1; k <= 25 && found_at < 0; ++k) {
    const JobSample& job = t.At(k * 0.1);
    if (std::count(job.pids.begin(), job.pids.end(), 110)) found_at = k * 0.1;
  }
  EXPECT_GT(found_at, 0);
  EXPECT_LE(found_at, 2.0 + 1e-9);
  // Between thread walks it stays in the tree.
  EXPECT_EQ(t.At(found_at + 0.1).pids, (std::vector<int>{100, 110}));
}

TEST(ProcessTree, ReadsNoChildrenFilesWhileNothingForks) {
  FakeProc fs;
  fs.Add(100, 1, "python");
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.forks = 500;
  t.At(0);
  t.At(0.1);
  // A child listed without the fork counter moving is not looked for (a real
  // kernel cannot do that: it shows the children files are left unread)...
  fs.Add(101, 100, "worker");
  fs.Publish();
  EXPECT_EQ(t.At(0.2).pids, std::vector<int>{100});
  EXPECT_EQ(t.At(2.5).pids, std::vector<int>{100});  // not even by the thread walk
  // ...and found on the tick the counter moves.
  t.forks = 501;
  EXPECT_EQ(t.At(2.6).pids, (std::vector<int>{100, 101}));
}

TEST(ProcessTree, FindsChildOfANonMainThreadAfterOneForkWithinTwoSeconds) {
  FakeProc fs;
  fs.Add(100, 1, "python").thread_children[105];
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.forks = 10;
  t.At(0);
  fs.Add(110, 100, "loader");
  fs[100].thread_children[100].clear();
  fs[100].thread_children[105] = {110};
  fs.Publish();
  t.forks = 11;  // one fork, then quiet: the next thread walk must still happen
  double found_at = -1;
  for (int k = 1; k <= 25 && found_at < 0; ++k) {
    const JobSample& job = t.At(k * 0.1);
    if (std::count(job.pids.begin(), job.pids.end(), 110)) found_at = k * 0.1;
  }
  EXPECT_GT(found_at, 0);
  EXPECT_LE(found_at, 2.0 + 1e-9);
}

TEST(ProcessTree, ReportsStartedAndExitedProcesses) {
  FakeProc fs;
  fs.Add(100, 1, "python");
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  const JobSample& first = t.At(0);
  ASSERT_EQ(first.started.size(), 1u);
  EXPECT_EQ(first.started[0].name, "python");
  EXPECT_EQ(first.started[0].cmdline, "python --flag");
  EXPECT_EQ(first.started[0].ppid, 1);

  fs.Add(101, 100, "worker");
  fs.Publish();
  const JobSample& second = t.At(0.1);
  EXPECT_EQ(Pids(second.started), std::vector<int>{101});
  EXPECT_EQ(second.started[0].ppid, 100);
  EXPECT_TRUE(second.exited.empty());
  EXPECT_TRUE(t.At(0.2).started.empty());

  fs.Kill(101);
  fs.Publish();
  const JobSample& third = t.At(0.3);
  EXPECT_EQ(Pids(third.exited), std::vector<int>{101});
  EXPECT_EQ(third.exited[0].cmdline, "worker --flag");
  EXPECT_EQ(third.processes, 1);

  fs.Kill(100);
  fs.Publish();
  const JobSample& last = t.At(0.4);
  EXPECT_EQ(Pids(last.exited), std::vector<int>{100});
  EXPECT_EQ(last.processes, 0);
  EXPECT_TRUE(last.pids.empty());
}

TEST(ProcessTree, ReportsAMemberThatRanANewProgram) {
  FakeProc fs;
  fs.Add(100, 1, "sh");
  fs.Add(101, 100, "sh");
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  EXPECT_EQ(t.At(0).started.size(), 2u);
  fs[101].comm = "python3";  // the forked shell exec'd python3
  fs.Publish();
  const JobSample& job = t.At(0.1);
  EXPECT_TRUE(job.started.empty());
  ASSERT_EQ(Pids(job.execed), std::vector<int>{101});
  EXPECT_EQ(job.execed[0].name, "python3");
  EXPECT_EQ(job.execed[0].cmdline, "python3 --flag");
  EXPECT_TRUE(t.At(0.2).execed.empty());
}

TEST(ProcessTree, AProgramCaughtInsideExecGetsItsCommandLineOnALaterTick) {
  FakeProc fs;
  fs.Add(100, 1, "sh");
  fs.Add(101, 100, "sh");
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.At(0);
  fs[101].comm = "sleep";  // exec has named it, its arguments are not there yet
  fs.Publish();
  fs.env.Set("/proc/101/cmdline", "");
  ASSERT_EQ(Pids(t.At(0.1).execed), std::vector<int>{101});
  fs.Publish();  // exec has finished
  const JobSample& job = t.At(0.2);
  ASSERT_EQ(Pids(job.execed), std::vector<int>{101});
  EXPECT_EQ(job.execed[0].cmdline, "sleep --flag");
  EXPECT_TRUE(t.At(0.3).execed.empty());
}

TEST(ProcessTree, SetRootsStartsAFreshTree) {
  FakeProc fs;
  fs.Add(100, 1, "a");
  fs.Add(200, 1, "b");
  fs.Add(201, 200, "b-worker");
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.At(0);
  src.SetRoots({200});
  const JobSample& job = t.At(0.1);
  EXPECT_EQ(job.pids, (std::vector<int>{200, 201}));
  EXPECT_EQ(Pids(job.exited), std::vector<int>{100});
}

TEST(ProcessTree, NoRootsLeavesTheJobUntouched) {
  FakeProc fs;
  ProcessTreeSource src(&fs.env, {}, TestOptions());
  Ticker t{&src};
  EXPECT_FALSE(t.At(0).processes);
}

}  // namespace
}  // namespace tv::process_tree_test

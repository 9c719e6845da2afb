// With a cgroup of the job's own, the process files are read when they pay:
// when the job's processes change, on row ticks, and for large trees one row
// in several; the figures in between are the last read's, and say their age.
#include <gtest/gtest.h>

#include "sources/process_tree.h"
#include "sources/process_tree_testing.h"

namespace tv::process_tree_cgroup_test {
namespace {

using testing::FakeProc;
using testing::TestOptions;
using testing::Ticker;

TEST(ProcessTreeWithCgroup, BetweenRowsTheLastReadStandsAndTheCgroupsCpu) {
  FakeProc fs;
  fs.Add(100, 1, "python").rss_bytes = 8192;
  fs.Add(101, 100, "worker");
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.procs_digest = 7;
  EXPECT_EQ(t.At(0, true).processes, 2);  // the first tick reads
  EXPECT_EQ(t.sample.job.process_files_age_s, 0);

  fs[100].rss_bytes = 3 * 4096ULL;
  fs[100].cpu_ticks += 50;
  fs.Publish();
  t.cgroup_cpu_cores = 0.7;
  const JobSample& between = t.At(0.1);
  EXPECT_EQ(between.rss_bytes, 8192 + 4096);  // as last read
  EXPECT_EQ(between.pids, (std::vector<int>{100, 101}));
  EXPECT_EQ(between.cpu_cores, 0.7);
  EXPECT_NEAR(*between.process_files_age_s, 0.1, 1e-9);
  EXPECT_TRUE(between.started.empty());

  const JobSample& row = t.At(1, true);  // a row: read again; the cgroup keeps the CPU
  EXPECT_EQ(row.rss_bytes, 4 * 4096);
  EXPECT_EQ(row.cpu_cores, 0.7);
  EXPECT_EQ(row.process_files_age_s, 0);
}

TEST(ProcessTreeWithCgroup, ANewProcessInTheCgroupIsReadAtOnce) {
  FakeProc fs;
  fs.Add(100, 1, "python");
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.procs_digest = 1;
  t.At(0, true);
  fs.Add(101, 100, "worker");
  fs.Publish();
  EXPECT_EQ(t.At(0.1).processes, 1);  // the cgroup lists the same processes
  t.procs_digest = 2;                 // now it lists another
  const JobSample& job = t.At(0.2);
  EXPECT_EQ(job.processes, 2);
  ASSERT_EQ(job.started.size(), 1u);
  EXPECT_EQ(job.started[0].pid, 101);
}

TEST(ProcessTreeWithCgroup, MemoryTakenBetweenRowsIsReadAtOnce) {
  FakeProc fs;
  fs.Add(100, 1, "python");
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.procs_digest = 1;
  t.cgroup_memory_bytes = 100 * testing::kMiB;
  t.At(0, true);
  fs[100].rss_bytes = 200ULL * 1024 * 1024;
  fs.Publish();
  t.cgroup_memory_bytes = 110 * testing::kMiB;  // under 16 MiB more: not yet
  EXPECT_EQ(t.At(0.1).rss_bytes, 4096);
  t.cgroup_memory_bytes = 200 * testing::kMiB;  // 100 MiB taken: whose, now
  EXPECT_EQ(t.At(0.2).rss_bytes, 200 * testing::kMiB);
  EXPECT_EQ(t.sample.job.process_files_age_s, 0);
}

// `sh -c 'python3 -c ...'`: the fork has run python and taken its memory
// before the tick that first sees it, and the cgroup moves no more after.
TEST(ProcessTreeWithCgroup, AForkFirstSeenRunningAProgramOfItsOwnCountsItsPagesThenItsPss) {
  using testing::kMiB;
  FakeProc fs;
  fs.Add(100, 1, "sh").rss_bytes = 1 * kMiB;
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.procs_digest = 1;
  t.cgroup_memory_bytes = 1 * kMiB;
  EXPECT_EQ(t.At(0, true).memory_bytes, 1 * kMiB);
  auto& python = fs.Add(101, 100, "python3");
  python.code = 0x7000000;  // exec'd before the tick that first sees it
  python.rss_bytes = 87 * kMiB;
  python.pss_bytes = 86 * kMiB;
  fs.Publish();
  t.procs_digest = 2;
  t.cgroup_memory_bytes = 88 * kMiB;
  // Not its parent's pages, though its PSS is not read yet.
  EXPECT_EQ(t.At(0.1).memory_bytes, 88 * kMiB);
  // Nothing moves in the cgroup; the round the new process asked for comes.
  EXPECT_EQ(t.At(0.2).memory_bytes, 87 * kMiB);
  EXPECT_EQ(t.sample.job.process_files_age_s, 0);
  EXPECT_NEAR(*t.At(0.3).process_files_age_s, 0.1, 1e-9);  // and then it rests
}

TEST(ProcessTreeWithCgroup, AForkThatRunsANewProgramHasItsPssReadAgain) {
  using testing::kMiB;
  FakeProc fs;
  fs.Add(100, 1, "sh").rss_bytes = 2 * kMiB;
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.procs_digest = 1;
  t.At(0, true);
  fs.Add(101, 100, "sh").rss_bytes = 2 * kMiB;  // a fork: the same pages
  fs[101].pss_bytes = 1 * kMiB;
  fs[100].pss_bytes = 1 * kMiB;
  fs.Publish();
  t.procs_digest = 2;
  EXPECT_EQ(t.At(0.1).memory_bytes, 2 * kMiB);  // counted once, in the parent
  EXPECT_EQ(t.At(0.2).memory_bytes, 2 * kMiB);  // and now by PSS
  fs[101].comm = "python3";                     // exec, then memory of its own
  fs[101].code = 0x7000000;
  fs[101].rss_bytes = 60 * kMiB;
  fs[101].pss_bytes = 50 * kMiB;
  fs.Publish();
  EXPECT_EQ(t.At(1, true).memory_bytes, 1 * kMiB + 59 * kMiB);  // the fork's PSS and growth
  EXPECT_EQ(t.At(1.1).memory_bytes, 51 * kMiB);                 // the program's own PSS
}

TEST(ProcessTreeWithCgroup, ALargeTreeIsReadOneRowInSeveral) {
  FakeProc fs;
  fs.Add(100, 1, "python");
  for (int pid = 101; pid < 164; ++pid) fs.Add(pid, 100, "worker");  // 64 processes
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.procs_digest = 1;
  EXPECT_EQ(t.At(0, true).processes, 64);
  fs[100].rss_bytes = 2 * 4096ULL;
  fs.Publish();
  // 64 processes: one row in two.
  EXPECT_EQ(t.At(1, true).rss_bytes, 64 * 4096);
  EXPECT_EQ(t.sample.job.process_files_age_s, 1);
  EXPECT_EQ(t.At(2, true).rss_bytes, 65 * 4096);
  EXPECT_EQ(t.sample.job.process_files_age_s, 0);
}

TEST(ProcessTreeWithCgroup, WithoutOneEveryTickReads) {
  FakeProc fs;
  fs.Add(100, 1, "python");
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.At(0, true);
  fs[100].rss_bytes = 2 * 4096ULL;
  fs.Publish();
  EXPECT_EQ(t.At(0.1).rss_bytes, 2 * 4096);
  EXPECT_EQ(t.sample.job.process_files_age_s, 0);
}

}  // namespace
}  // namespace tv::process_tree_cgroup_test

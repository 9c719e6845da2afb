#include "sources/process_tree.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

namespace tv {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// A fake /proc in a MemEnv: processes with their stat, cmdline, io, smaps_rollup
// and per-thread children files. Clock ticks are 100/s and pages 4 KiB.
class FakeProc {
 public:
  struct P {
    int ppid = 0;
    std::string comm;
    uint64_t start = 0;
    uint64_t cpu_ticks = 0;
    uint64_t rss_bytes = 4096;
    std::optional<uint64_t> pss_bytes;  // absent: equal to RSS
    uint64_t read_bytes = 0;
    uint64_t write_bytes = 0;
    std::map<int, std::vector<int>> thread_children;  // tid -> children
  };

  P& Add(int pid, int ppid, std::string comm, uint64_t start = 0) {
    P& p = procs_[pid];
    p = P{};
    p.ppid = ppid;
    p.comm = std::move(comm);
    p.start = start ? start : 1000 + pid;
    p.thread_children[pid];
    if (procs_.count(ppid)) procs_[ppid].thread_children[ppid].push_back(pid);
    return p;
  }
  P& operator[](int pid) { return procs_.at(pid); }

  // Removes the process and its files; its parent no longer lists it.
  void Kill(int pid) {
    Unpublish(pid);
    procs_.erase(pid);
    for (auto& [other, p] : procs_) {
      for (auto& [tid, kids] : p.thread_children) std::erase(kids, pid);
    }
  }

  void Publish() {
    for (auto& [pid, p] : procs_) {
      Unpublish(pid);
      std::string base = fmt::format("/proc/{}/", pid);
      env.Set(base + "stat",
              fmt::format("{} ({}) S {} 1 1 0 -1 0 0 0 0 0 {} 0 0 0 20 0 {} 0 {} 1000 {} 1 2 3\n",
                          pid, p.comm, p.ppid, p.cpu_ticks, p.thread_children.size(), p.start,
                          p.rss_bytes / 4096));
      env.Set(base + "cmdline", p.comm + std::string("\0--flag\0", 8));
      env.Set(base + "io", fmt::format("rchar: 1\nread_bytes: {}\nwrite_bytes: {}\n", p.read_bytes,
                                       p.write_bytes));
      env.Set(base + "smaps_rollup", fmt::format("Rss: {} kB\nPss: {} kB\n", p.rss_bytes / 1024,
                                                 p.pss_bytes.value_or(p.rss_bytes) / 1024));
      for (auto& [tid, kids] : p.thread_children) {
        std::string list;
        for (int k : kids) list += fmt::format("{} ", k);
        env.Set(base + fmt::format("task/{}/children", tid), list);
      }
    }
  }

  MemEnv env;

 private:
  void Unpublish(int pid) {
    std::string base = fmt::format("/proc/{}/", pid);
    for (const char* leaf : {"stat", "cmdline", "io", "smaps_rollup"}) env.Remove(base + leaf);
    for (auto& [tid, kids] : procs_[pid].thread_children) {
      env.Remove(base + fmt::format("task/{}/children", tid));
    }
  }

  std::map<int, P> procs_;
};

ProcessTreeOptions TestOptions() {
  ProcessTreeOptions o;
  o.clock_ticks_per_second = 100;
  o.page_size_bytes = 4096;
  o.cpu_seconds = [] { return 0.0; };
  return o;
}

struct Ticker {
  ProcessTreeSource* source;
  Sample sample;
  std::vector<Notice> notices;
  const JobSample& At(double t, bool row_tick = false) {
    sample = Sample{};
    notices.clear();
    source->Read(Tick{t, row_tick}, &sample, &notices);
    return sample.job;
  }
};

std::vector<int> Pids(const std::vector<ProcessInfo>& infos) {
  std::vector<int> pids;
  for (const auto& i : infos) pids.push_back(i.pid);
  std::sort(pids.begin(), pids.end());
  return pids;
}

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
  EXPECT_EQ(job.cpu_cores, 0);  // the newcomer's lifetime CPU is not this tick's

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

TEST(ProcessTree, CpuCoresFromTickDeltas) {
  FakeProc fs;
  fs.Add(100, 1, "python").cpu_ticks = 1000;
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  EXPECT_FALSE(t.At(0).cpu_cores);
  fs[100].cpu_ticks = 1015;  // 0.15 s of CPU in 0.1 s
  fs.Add(101, 100, "worker").cpu_ticks = 99999;
  fs.Publish();
  EXPECT_DOUBLE_EQ(*t.At(0.1).cpu_cores, 1.5);
  fs[100].cpu_ticks = 1025;
  fs[101].cpu_ticks = 100009;
  fs.Publish();
  EXPECT_DOUBLE_EQ(*t.At(0.2).cpu_cores, 2.0);
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
  o.cpu_seconds = [&cpu] { return cpu += 0.0005; };  // each round costs 0.5 ms -> every 1 s
  o.pss.max_periodic_s = 30;
  ProcessTreeSource src(&fs.env, {100}, o);
  Ticker t{&src};
  EXPECT_EQ(*t.At(0).memory_bytes, 10 * kMiB);
  fs[100].pss_bytes = 20 * kMiB;  // PSS moves without RSS moving: only a round sees it
  fs.Publish();
  EXPECT_EQ(*t.At(0.9).memory_bytes, 10 * kMiB);
  EXPECT_EQ(*t.At(1.0).memory_bytes, 20 * kMiB);

  // A new worker triggers a round 0.5 s after the last one; until then it counts its RSS.
  fs.Add(101, 100, "worker").rss_bytes = 8 * kMiB;
  fs[101].pss_bytes = 2 * kMiB;
  fs.Publish();
  EXPECT_EQ(*t.At(1.2).memory_bytes, 20 * kMiB + 8 * kMiB);
  EXPECT_EQ(*t.At(1.5).memory_bytes, 20 * kMiB + 2 * kMiB);
}

TEST(ProcessTree, PssSpacingGrowsWithRoundCost) {
  FakeProc fs;
  fs.Add(100, 1, "python").pss_bytes = 4096;
  fs.Publish();
  ProcessTreeOptions o = TestOptions();
  double cpu = 0;
  o.cpu_seconds = [&cpu] { return cpu += 0.001; };  // 1 ms per round -> every 2 s
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
}  // namespace tv

// Per-process files held open between ticks: fresh content, exits, the cap, and
// running short of file descriptors.
#include <gtest/gtest.h>

#include <string_view>

#include "sources/process_tree.h"
#include "sources/process_tree_testing.h"

namespace tv::process_tree_files_test {
namespace {

using testing::FakeProc;
using testing::Pids;
using testing::TestOptions;
using testing::Ticker;

// Forwards to a MemEnv, counting reads by path, and fails OpenRereadable as a
// process out of file descriptors would once `opens_left` reaches 0.
class CountingEnv final : public Env {
 public:
  explicit CountingEnv(MemEnv* mem) : mem_(mem) {}
  Status ReadFile(const char* path, std::string* out) override {
    std::string_view p = path;
    if (p.ends_with("/stat") || p.ends_with("/children") || p.ends_with("/io")) ++path_reads;
    return mem_->ReadFile(path, out);
  }
  Status ListDir(const char* path, std::vector<std::string>* names) override {
    return mem_->ListDir(path, names);
  }
  Status OpenRereadable(const char* path, std::unique_ptr<RereadableFile>* out) override {
    if (opens_left == 0) return Status::IoError(std::string(path) + ": Too many open files");
    if (opens_left > 0) --opens_left;
    return mem_->OpenRereadable(path, out);
  }
  int path_reads = 0;
  int opens_left = -1;  // negative: no limit

 private:
  MemEnv* mem_;
};

TEST(ProcessTreeFiles, HeldFilesSeeFreshContentEachTick) {
  FakeProc fs;
  fs.Add(100, 1, "python").cpu_ticks = 1000;
  fs.Add(101, 100, "worker").cpu_ticks = 2000;
  fs.Publish();
  CountingEnv env(&fs.env);
  ProcessTreeSource src(&env, {100}, TestOptions());
  Ticker t{&src};
  t.At(0);
  t.At(0.1, true);  // second tick: stat, children and io opened and held
  EXPECT_EQ(fs.env.open_handles(), 6);
  env.path_reads = 0;
  for (int k = 2; k <= 5; ++k) {
    fs[100].cpu_ticks += 10;  // 1 core
    fs[101].cpu_ticks += 5;   // half a core
    fs[101].write_bytes += 1000;
    fs.Publish();
    const JobSample& job = t.At(k * 0.1, k == 5);
    EXPECT_DOUBLE_EQ(job.cpu_cores.value_or(-1), 1.5) << k;
  }
  EXPECT_DOUBLE_EQ(t.sample.job.write_bytes_per_second.value_or(-1), 4000 / 0.4);
  EXPECT_EQ(env.path_reads, 0);
  EXPECT_TRUE(t.notices.empty());
}

TEST(ProcessTreeFiles, ProcessWhoseHeldStatFailsIsReportedExited) {
  FakeProc fs;
  fs.Add(100, 1, "python");
  fs.Add(101, 100, "worker");
  fs.Add(102, 100, "worker");
  fs.Publish();
  ProcessTreeSource src(&fs.env, {100}, TestOptions());
  Ticker t{&src};
  t.At(0);
  t.At(0.1, true);
  EXPECT_EQ(fs.env.open_handles(), 9);
  fs.Kill(101);
  fs.Publish();
  // 102 is gone too, though its parent's listing still names it.
  fs.env.Remove("/proc/102/stat");
  const JobSample& job = t.At(0.2);
  EXPECT_EQ(Pids(job.exited), (std::vector<int>{101, 102}));
  EXPECT_EQ(job.pids, std::vector<int>{100});
  EXPECT_EQ(fs.env.open_handles(), 3);
  EXPECT_TRUE(t.notices.empty());
}

TEST(ProcessTreeFiles, MembersBeyondTheCapAreReadByPath) {
  FakeProc fs;
  fs.Add(100, 1, "python").cpu_ticks = 1000;
  fs.Add(101, 100, "worker").cpu_ticks = 2000;
  fs.Add(102, 100, "worker").cpu_ticks = 3000;
  fs.Publish();
  ProcessTreeOptions options = TestOptions();
  options.max_held_files = 2;
  CountingEnv env(&fs.env);
  ProcessTreeSource src(&env, {100}, options);
  Ticker t{&src};
  t.At(0);
  for (int k = 1; k <= 3; ++k) {
    for (int pid : {100, 101, 102}) fs[pid].cpu_ticks += 10;
    fs.Publish();
    const JobSample& job = t.At(k * 0.1, true);
    EXPECT_EQ(fs.env.open_handles(), 2);
    EXPECT_EQ(job.pids, (std::vector<int>{100, 101, 102}));
    EXPECT_DOUBLE_EQ(job.cpu_cores.value_or(-1), 3.0) << k;
  }
  EXPECT_GT(env.path_reads, 0);

  // The holder leaves; its files go to the members still read by path.
  fs.Kill(100);
  fs.Publish();
  const JobSample& job = t.At(0.4, true);
  EXPECT_EQ(Pids(job.exited), std::vector<int>{100});
  EXPECT_EQ(job.pids, (std::vector<int>{101, 102}));
  EXPECT_EQ(fs.env.open_handles(), 2);

  options.max_held_files = 0;
  ProcessTreeSource none(&fs.env, {101}, options);
  Ticker t2{&none};
  t2.At(0);
  t2.At(0.1, true);
  EXPECT_EQ(fs.env.open_handles(), 2);  // only the first source's
}

TEST(ProcessTreeFiles, RunningShortOfDescriptorsClosesEveryHeldFile) {
  FakeProc fs;
  fs.Add(100, 1, "python").cpu_ticks = 1000;
  fs.Add(101, 100, "worker").cpu_ticks = 2000;
  fs.Publish();
  CountingEnv env(&fs.env);
  env.opens_left = 3;
  ProcessTreeSource src(&env, {100}, TestOptions());
  Ticker t{&src};
  t.At(0);
  const JobSample& job = t.At(0.1, true);
  EXPECT_EQ(job.pids, (std::vector<int>{100, 101}));
  EXPECT_EQ(fs.env.open_handles(), 0);
  ASSERT_EQ(t.notices.size(), 1u);
  EXPECT_NE(t.notices[0].message.find("Too many open files"), std::string::npos);

  env.opens_left = -1;  // descriptors are back; the source keeps reading by path
  fs[100].cpu_ticks += 10;
  fs.Publish();
  EXPECT_DOUBLE_EQ(t.At(0.2).cpu_cores.value_or(-1), 1.0);
  EXPECT_EQ(fs.env.open_handles(), 0);
  EXPECT_TRUE(t.notices.empty());
}

}  // namespace
}  // namespace tv::process_tree_files_test

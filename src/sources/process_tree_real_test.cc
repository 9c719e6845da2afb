// The process source on the real /proc: a forked family of this test process.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <string>
#include <thread>

#include "sources/process_tree.h"

namespace tv::process_tree_real_test {
namespace {

size_t OpenFds() {
  std::vector<std::string> names;
  PosixEnv().ListDir("/proc/self/fd", &names);
  return names.size();
}

TEST(ProcessTreeReal, FindsForkedChildrenOfThisProcess) {
  std::string children = "/proc/self/task/" + std::to_string(syscall(SYS_gettid)) + "/children";
  if (access(children.c_str(), R_OK) != 0) GTEST_SKIP() << children << " missing";
  pid_t kids[2];
  for (pid_t& kid : kids) {
    kid = fork();
    ASSERT_GE(kid, 0);
    if (kid == 0) {
      pause();
      _exit(0);
    }
  }
  PosixEnv env;
  ProcessTreeSource src(&env, {getpid()});
  Sample sample;
  std::vector<Notice> notices;
  src.Read(Tick{0, false}, &sample, &notices);
  sample = Sample{};
  src.Read(Tick{0.1, true}, &sample, &notices);
  const JobSample& job = sample.job;
  EXPECT_GE(job.processes.value_or(0), 3);
  for (pid_t kid : kids) {
    EXPECT_TRUE(std::binary_search(job.pids.begin(), job.pids.end(), kid)) << kid;
  }
  EXPECT_TRUE(job.cpu_cores.has_value());
  EXPECT_GT(job.rss_bytes.value_or(0), 0);
  EXPECT_GT(job.memory_bytes.value_or(0), 0);
  EXPECT_LE(*job.memory_bytes, *job.rss_bytes);
  for (pid_t kid : kids) {
    kill(kid, SIGKILL);
    waitpid(kid, nullptr, 0);
  }
}

TEST(ProcessTreeReal, ChildReapedWhileItsFilesAreHeldIsReportedExited) {
  pid_t kid = fork();
  ASSERT_GE(kid, 0);
  if (kid == 0) {
    pause();
    _exit(0);
  }
  size_t fds_before = OpenFds();
  PosixEnv env;
  ProcessTreeSource src(&env, {getpid()});
  Sample sample;
  std::vector<Notice> notices;
  for (int k = 0; k < 3; ++k) {  // from the second tick on, its files are held
    sample = Sample{};
    src.Read(Tick{k * 0.1, true}, &sample, &notices);
  }
  ASSERT_TRUE(std::binary_search(sample.job.pids.begin(), sample.job.pids.end(), kid));
  EXPECT_GE(OpenFds(), fds_before + 6);  // stat, children and io of both
  kill(kid, SIGKILL);
  waitpid(kid, nullptr, 0);
  sample = Sample{};
  src.Read(Tick{0.3, true}, &sample, &notices);
  const JobSample& job = sample.job;
  EXPECT_FALSE(std::binary_search(job.pids.begin(), job.pids.end(), kid));
  EXPECT_TRUE(std::any_of(job.exited.begin(), job.exited.end(),
                          [&](const ProcessInfo& p) { return p.pid == kid; }));
  EXPECT_TRUE(std::binary_search(job.pids.begin(), job.pids.end(), getpid()));
  for (const Notice& n : notices) ADD_FAILURE() << n.message;
  EXPECT_EQ(OpenFds(), fds_before + 3);  // the child's files were closed
}

TEST(ProcessTreeReal, FindsChildForkedByAnotherThread) {
  std::string children = "/proc/self/task/" + std::to_string(syscall(SYS_gettid)) + "/children";
  if (access(children.c_str(), R_OK) != 0) GTEST_SKIP() << children << " missing";
  std::promise<pid_t> forked;
  std::promise<void> done;
  std::thread forker([&] {
    pid_t kid = fork();
    if (kid == 0) {
      pause();
      _exit(0);
    }
    forked.set_value(kid);
    done.get_future().wait();  // stay alive: the child is this thread's child
  });
  pid_t kid = forked.get_future().get();
  ASSERT_GT(kid, 0);
  PosixEnv env;
  ProcessTreeSource src(&env, {getpid()});
  Sample sample;
  std::vector<Notice> notices;
  src.Read(Tick{0, false}, &sample, &notices);  // the first tick walks every thread
  EXPECT_TRUE(std::binary_search(sample.job.pids.begin(), sample.job.pids.end(), kid));
  done.set_value();
  forker.join();
  kill(kid, SIGKILL);
  waitpid(kid, nullptr, 0);
}

}  // namespace
}  // namespace tv::process_tree_real_test

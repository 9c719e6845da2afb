#include "sources/stack_capture.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "markers/endpoint.h"
#include "markers/protocol.h"

namespace tv::stack_capture_test {
namespace {

constexpr int kSignal = 40;
constexpr char kStacks[] =
    "Current thread 0x1 (most recent call first):\n"
    "  File \"/nowhere/train.py\", line 3 in <module>\n";

int g_fd = -1;
void WriteStacks(int /*sig*/) {
  ssize_t ignored = ::write(g_fd, kStacks, sizeof(kStacks) - 1);
  (void)ignored;
}

struct Captured {
  Captured() {
    std::string error;
    endpoint = MarkerEndpoint::Create(1.0, &error);
    run_dir = std::filesystem::temp_directory_path() / ("tv-stacks-" + std::to_string(::getpid()));
    std::filesystem::create_directories(run_dir);
  }
  ~Captured() {
    for (pid_t p : children) ::kill(p, SIGKILL), ::waitpid(p, nullptr, 0);
    std::filesystem::remove_all(run_dir);
  }
  // A child that sleeps; with `answers`, it writes kStacks to its stacks
  // file on kSignal.
  pid_t Start(bool answers) {
    pid_t pid = ::fork();
    if (pid == 0) {
      if (answers) {
        std::string path = StacksPathFor(endpoint->socket_path(), static_cast<int>(::getpid()));
        g_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
        struct sigaction sa {};
        sa.sa_handler = WriteStacks;
        ::sigaction(kSignal, &sa, nullptr);
      }
      for (;;) ::pause();
    }
    children.push_back(pid);
    ::usleep(50000);  // its handler is in place
    return pid;
  }
  std::unique_ptr<MarkerEndpoint> endpoint;
  std::filesystem::path run_dir;
  std::vector<pid_t> children;
};

TEST(StackCapture, AProcessThatOffersAnswersAndItsStacksAreSavedAndJudged) {
  Captured c;
  pid_t pid = c.Start(true);
  StackCapture capture(c.endpoint->socket_path(), c.run_dir.string());
  capture.Offer(pid, 2, kSignal);
  ASSERT_TRUE(capture.Request("request", "ask-1"));
  std::vector<TrainingEvent> events;
  for (int i = 0; i < 50 && events.empty(); ++i) {
    ::usleep(20000);
    capture.Poll(100 + i * 0.02, &events);
  }
  ASSERT_EQ(events.size(), 1u);
  const TrainingEvent& e = events[0];
  EXPECT_EQ(e.type, EventType::kStacks);
  EXPECT_EQ(e.pid, pid);
  EXPECT_EQ(e.rank, 2);
  ASSERT_TRUE(e.stacks);
  EXPECT_EQ(e.stacks->request, "ask-1");
  EXPECT_EQ(e.stacks->reason, "request");
  EXPECT_EQ(e.stacks->waits_in, "running");
  EXPECT_EQ(e.stacks->at, "/nowhere/train.py:3 in <module>");
  EXPECT_EQ(e.stacks->file, "stacks/1-request-rank2-" + std::to_string(pid) + ".txt");
  std::ifstream saved(c.run_dir / e.stacks->file);
  std::string text((std::istreambuf_iterator<char>(saved)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, kStacks);
  // A second capture reads only what came after the first.
  ASSERT_TRUE(capture.Request("stalled", ""));
  events.clear();
  for (int i = 0; i < 50 && events.empty(); ++i) {
    ::usleep(20000);
    capture.Poll(200 + i * 0.02, &events);
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].stacks->file, "stacks/2-stalled-rank2-" + std::to_string(pid) + ".txt");
  EXPECT_EQ(std::filesystem::file_size(c.run_dir / events[0].stacks->file), sizeof(kStacks) - 1);
}

TEST(StackCapture, AProcessWithoutTheHandlerIsNeverSignalledAndSaysNoAnswer) {
  Captured c;
  pid_t pid = c.Start(false);  // the default action of a real-time signal ends a process
  StackCapture capture(c.endpoint->socket_path(), c.run_dir.string());
  capture.Offer(pid, -1, kSignal);
  ASSERT_TRUE(capture.Request("request", "ask"));
  std::vector<TrainingEvent> events;
  capture.Poll(100, &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].stacks->waits_in, "no-answer");
  EXPECT_EQ(events[0].stacks->state, "sleeping");
  EXPECT_EQ(events[0].stacks->file, "");
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), 0);  // alive
  EXPECT_FALSE(std::filesystem::exists(c.run_dir / "stacks"));
}

TEST(StackCapture, NothingIsAskedOfNobodyAndAGoneProcessIsForgotten) {
  Captured c;
  StackCapture capture(c.endpoint->socket_path(), c.run_dir.string());
  EXPECT_FALSE(capture.Request("stalled", ""));
  pid_t pid = c.Start(true);
  capture.Offer(pid, -1, 9);  // SIGKILL: never a stacks signal
  EXPECT_FALSE(capture.Request("request", "a"));
  capture.Offer(pid, -1, kSignal);
  capture.Forget(pid);
  EXPECT_FALSE(capture.Request("request", "a"));
}

}  // namespace
}  // namespace tv::stack_capture_test

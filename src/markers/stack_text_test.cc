#include "markers/stack_text.h"

#include <gtest/gtest.h>

#include <map>

namespace tv::stack_text_test {
namespace {

constexpr char kLib[] = "/usr/lib/python3.11/site-packages/";

std::string Frame(const std::string& file, int line, const std::string& function) {
  return "  File \"" + file + "\", line " + std::to_string(line) + " in " + function + "\n";
}

StackWait Judge(const std::string& text, std::map<std::pair<std::string, int>, std::string> lines) {
  return WhereItWaits(ParseStacks(text), [&](const std::string& file, int line) {
    auto it = lines.find({file, line});
    return it == lines.end() ? std::string() : it->second;
  });
}

TEST(StackText, ParsesThreadsAndFramesAsFaulthandlerWritesThem) {
  std::string text = "Thread 0x00007fccdf63b6c0 (most recent call first):\n" +
                     Frame("/job/train.py", 8, "worker") +
                     Frame("/usr/lib/python3.11/threading.py", 982, "run") + "\n" +
                     "Current thread 0x00007fcce047bb80 (most recent call first):\n" +
                     Frame("/job/train.py", 11, "f") + Frame("/job/train.py", 13, "<module>") +
                     "  <no Python frame>\n";
  std::vector<StackThread> threads = ParseStacks(text);
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_FALSE(threads[0].current);
  ASSERT_EQ(threads[0].frames.size(), 2u);
  EXPECT_EQ(threads[0].frames[1].file, "/usr/lib/python3.11/threading.py");
  EXPECT_EQ(threads[0].frames[1].line, 982);
  EXPECT_EQ(threads[0].frames[1].function, "run");
  EXPECT_TRUE(threads[1].current);
  EXPECT_EQ(threads[1].frames.size(), 2u);
  EXPECT_TRUE(ParseStacks("garbage\n  File \"x").empty());
}

TEST(StackText, TheMainThreadIsTheOneRunningTheModuleWhicheverWroteThem) {
  std::string text = "Current thread 0x1 (most recent call first):\n" +
                     Frame("/usr/lib/python3.11/threading.py", 320, "wait") +
                     Frame("/job/train.py", 5, "poll") + "Thread 0x2 (most recent call first):\n" +
                     Frame("/job/train.py", 30, "<module>");
  StackWait w = Judge(text, {{{"/job/train.py", 30}, "    time.sleep(600)  "}});
  EXPECT_EQ(w.waits_in, "sleep");
  EXPECT_EQ(w.at, "/job/train.py:30 in <module>");
  EXPECT_EQ(w.code, "time.sleep(600)");
  EXPECT_EQ(w.threads, 2);
}

TEST(StackText, ACollectiveOrALoaderAnywhereInTheStackNamesIt) {
  std::string collective =
      "Current thread 0x1 (most recent call first):\n" +
      Frame(std::string(kLib) + "torch/distributed/distributed_c10d.py", 2501, "all_reduce") +
      Frame(std::string(kLib) + "torch/distributed/c10d_logger.py", 83, "wrapper") +
      Frame("/job/train.py", 40, "<module>");
  StackWait w = Judge(collective, {{{"/job/train.py", 40}, "dist.all_reduce(t)"}});
  EXPECT_EQ(w.waits_in, "collective");
  EXPECT_EQ(w.frame, "all_reduce (torch/distributed/distributed_c10d.py:2501)");
  EXPECT_EQ(w.code, "dist.all_reduce(t)");

  std::string loader =
      "Current thread 0x1 (most recent call first):\n" +
      Frame("/usr/lib/python3.11/multiprocessing/connection.py", 440, "_poll") +
      Frame("/usr/lib/python3.11/multiprocessing/queues.py", 113, "get") +
      Frame(std::string(kLib) + "torch/utils/data/dataloader.py", 1133, "_try_get_data") +
      Frame("/job/train.py", 12, "<module>");
  w = Judge(loader, {});
  EXPECT_EQ(w.waits_in, "data-loader");  // not the connection's I/O it waits through
  EXPECT_EQ(w.frame, "_try_get_data (torch/utils/data/dataloader.py:1133)");
  EXPECT_EQ(w.code, "");  // the line could not be read
}

TEST(StackText, TheInnermostFrameOrItsLineNamesLocksIoSleepAndRunningCode) {
  auto one = [](const std::string& file, int line, const std::string& fn) {
    return "Current thread 0x1 (most recent call first):\n" + Frame(file, line, fn) +
           Frame("/job/train.py", 50, "<module>");
  };
  EXPECT_EQ(Judge(one("/usr/lib/python3.11/threading.py", 320, "wait"), {}).waits_in, "lock");
  EXPECT_EQ(Judge(one("/usr/lib/python3.11/socket.py", 700, "readinto"), {}).waits_in, "io");
  std::string script =
      "Current thread 0x1 (most recent call first):\n" + Frame("/job/train.py", 50, "<module>");
  for (const auto& [code, waits_in] : std::vector<std::pair<std::string, std::string>>{
           {"with lock:", "lock"},
           {"done.acquire()", "lock"},
           {"data = f.read()", "io"},
           {"time.sleep(5)", "sleep"},
           {"x = model(batch)", "running"},
       }) {
    StackWait w = Judge(script, {{{"/job/train.py", 50}, code}});
    EXPECT_EQ(w.waits_in, waits_in) << code;
    EXPECT_EQ(w.frame, "<module> (/job/train.py:50)");
  }
  EXPECT_EQ(Judge("Current thread 0x1 (most recent call first):\n", {}).waits_in, "");
}

}  // namespace
}  // namespace tv::stack_text_test

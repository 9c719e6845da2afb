#include "analysis/processes.h"

#include <gtest/gtest.h>

namespace tv::processes_test {
namespace {

ProcessInfo Info(int pid, int ppid, std::string name, std::string cmdline) {
  return ProcessInfo{pid, ppid, std::move(name), std::move(cmdline)};
}

TEST(ProcessTable, TopProcessesWithTheirRoles) {
  ProcessTable table(100);
  std::vector<Event> events;
  Sample s;
  s.job.started = {Info(100, 1, "torchrun", "torchrun train.py"),
                   Info(101, 100, "python", "python train.py"),
                   Info(102, 101, "python", "python train.py"),
                   Info(103, 101, "python", "python -c from multiprocessing.spawn import x")};
  s.job.members = {{100, 1, 1.0, 50e6, 40e6, false},
                   {101, 100, 30.0, 900e6, 700e6, false},
                   {102, 101, 12.0, 800e6, 200e6, false},
                   {103, 101, 2.0, 100e6, 90e6, false}};
  TrainingEvent hello;
  hello.type = EventType::kClientStart;
  hello.pid = 101;
  hello.rank = 0;
  s.training.events = {hello};
  table.OnSample(s, &events);
  s = Sample{};
  s.job.members = {{100, 1, 1.0, 50e6, 40e6, false},
                   {101, 100, 35.0, 900e6, 600e6, false},
                   {102, 101, 12.5, 800e6, 150e6, true}};
  s.job.exited = {Info(103, 101, "python", "")};
  table.OnSample(s, &events);
  auto top = table.Top(2);
  ASSERT_EQ(top.by_cpu.size(), 2u);
  EXPECT_EQ(top.by_cpu[0].pid, 101);
  EXPECT_EQ(top.by_cpu[0].role, "rank 0");
  EXPECT_EQ(top.by_cpu[0].cpu_seconds, 35.0);
  EXPECT_EQ(top.by_cpu[0].memory_bytes_max, 700e6);  // its peak, not its last
  EXPECT_EQ(top.by_cpu[1].role, "DataLoader worker");
  EXPECT_EQ(top.by_cpu[1].command, "python train.py");
  EXPECT_EQ(top.by_memory[0].pid, 101);
  EXPECT_EQ(top.by_memory[1].pid, 102);
  auto all = table.Top(10);
  ASSERT_EQ(all.by_cpu.size(), 4u);
  EXPECT_EQ(all.by_cpu[2].role, "worker");
  EXPECT_EQ(all.by_cpu[2].exited, true);
  EXPECT_EQ(all.by_cpu[3].role, "launcher");
  // Still running at the end: not the command itself, not a zombie.
  auto left = table.StillRunning([](int, const std::string&) { return true; });
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].pid, 101);
}

TEST(ProcessTable, AProcessIsNamedForTheProgramItRanAfterForking) {
  ProcessTable table(100);
  std::vector<Event> events;
  Sample s;
  s.job.started = {Info(100, 1, "sh", "sh -c python3 burn.py & python3 burn.py"),
                   Info(101, 100, "sh", "sh -c python3 burn.py & python3 burn.py")};
  s.job.members = {{100, 1, 0.1, 3e6, 3e6, false}, {101, 100, 0.0, 3e6, 3e6, false}};
  table.OnSample(s, &events);
  s = Sample{};
  s.job.execed = {Info(101, 100, "python3", "python3 burn.py")};
  s.job.members = {{100, 1, 0.1, 3e6, 3e6, false}, {101, 100, 9.0, 9e6, 9e6, false}};
  table.OnSample(s, &events);
  auto top = table.Top(1);
  EXPECT_EQ(top.by_cpu[0].pid, 101);
  EXPECT_EQ(top.by_cpu[0].name, "python3");
  EXPECT_EQ(top.by_cpu[0].command, "python3 burn.py");
  EXPECT_EQ(top.by_cpu[0].role, "");  // ran its own program: no DataLoader worker
}

TEST(ProcessTable, TheExceptionAProcessDiedOf) {
  ProcessTable table(7);
  std::vector<Event> events;
  Sample s;
  TrainingEvent bye;
  bye.type = EventType::kClientEnd;
  bye.pid = 7;
  bye.exception = "ValueError";
  bye.message = "bad shape";
  s.training.events = {bye};
  EXPECT_FALSE(table.Exception());
  table.OnSample(s, &events);
  ASSERT_TRUE(table.Exception());
  EXPECT_EQ(table.Exception()->type, "ValueError");
  EXPECT_EQ(table.Exception()->message, "bad shape");
  EXPECT_EQ(table.Exception()->pid, 7);
  EXPECT_FALSE(table.Exception()->rank);
  RunSummary summary;
  table.AddTo(&summary);
  EXPECT_EQ(RunSummaryJson(summary)["exception"].dump(),
            R"({"type":"ValueError","message":"bad shape","pid":7})");
}

TEST(ProcessTable, SummaryListsLeakedOnlyOnceTheCommandEnded) {
  ProcessTable table(1);
  RunSummary summary;
  table.AddTo(&summary);
  EXPECT_FALSE(RunSummaryJson(summary).contains("leaked"));
  table.set_command_ended([](int, const std::string&) { return true; });
  table.AddTo(&summary);
  EXPECT_EQ(RunSummaryJson(summary)["leaked"], nlohmann::ordered_json::array());
}

}  // namespace
}  // namespace tv::processes_test

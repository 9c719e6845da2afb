// The processes of a run go into summary.json as they always have and come
// back typed; what is mistyped stays unknown and is named.
#include "store/process_record.h"

#include <gtest/gtest.h>

#include "store/run_v1_fixture.h"

namespace tv::process_record_test {
namespace {

using OJson = nlohmann::ordered_json;

// The processes of a summary written by 0.1.0, read and written back in their
// place, are the file.
TEST(ProcessRecord, OfASummaryWrittenBy010WrittenBackAreTheFile) {
  std::string text = RunV1Text("summary.json");
  OJson summary = OJson::parse(text);
  RunProcesses p;
  ASSERT_TRUE(ProcessesFromSummary(summary, &p).ok());
  ASSERT_TRUE(p.top);
  ASSERT_FALSE(p.top->by_cpu.empty());
  EXPECT_EQ(p.top->by_cpu[0].role, "main");
  EXPECT_EQ(p.top->by_cpu[0].exited, false);
  ASSERT_TRUE(p.leaked);
  EXPECT_TRUE(p.leaked->empty());
  EXPECT_FALSE(p.exception);
  PutProcesses(p, &summary);
  EXPECT_EQ(summary.dump(2, ' ', false, OJson::error_handler_t::replace) + "\n", text);
}

TEST(ProcessRecord, LeakedProcessesAndTheExceptionAreWrittenInTheirOrder) {
  RunProcesses p;
  p.leaked = {
      ProcessRecord{
          .pid = 9, .role = "DataLoader worker", .name = "python", .command = "python train.py"},
      ProcessRecord{.pid = 10, .name = "sleep", .command = "sleep 60"}};
  p.exception =
      ExceptionRecord{.type = "RuntimeError", .message = "CUDA out of memory", .pid = 8, .rank = 1};
  OJson summary = OJson::object();
  PutProcesses(p, &summary);
  EXPECT_EQ(
      summary.dump(),
      R"({"leaked":[{"pid":9,"name":"python","command":"python train.py",)"
      R"("role":"DataLoader worker"},{"pid":10,"name":"sleep","command":"sleep 60"}],)"
      R"("exception":{"type":"RuntimeError","message":"CUDA out of memory","pid":8,"rank":1}})");
  RunProcesses back;
  ASSERT_TRUE(ProcessesFromSummary(summary, &back).ok());
  EXPECT_FALSE(back.top);
  ASSERT_EQ(back.leaked->size(), 2u);
  EXPECT_EQ((*back.leaked)[0].role, "DataLoader worker");
  EXPECT_EQ(back.exception->rank, 1);
}

TEST(ProcessRecord, AMistypedValueIsUnknownAndNamedTheRestIsRead) {
  RunProcesses p;
  Status s = ProcessesFromSummary(nlohmann::json::parse(R"j({
    "processes": {"by_cpu": [{"pid": 1, "cpu_seconds": "a lot", "command": "x"}, 3]},
    "leaked": "none", "exception": {"type": "ValueError", "rank": 0.5}})j"),
                                  &p);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "key processes.by_cpu[0].cpu_seconds: expected a number, got a string");
  ASSERT_EQ(p.top->by_cpu.size(), 1u);  // the entry that is no object left out
  EXPECT_EQ(p.top->by_cpu[0].command, "x");
  EXPECT_FALSE(p.top->by_cpu[0].cpu_seconds);
  EXPECT_TRUE(p.leaked && p.leaked->empty());
  EXPECT_EQ(p.exception->type, "ValueError");
  EXPECT_FALSE(p.exception->rank);
}

}  // namespace
}  // namespace tv::process_record_test

#include "sources/trace_reads.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tv::trace_reads_test {
namespace {

TrainingEvent Profiled(const std::string& dir) {
  TrainingEvent e;
  e.type = EventType::kProfile;
  e.profile = ProfileCapture{"input-bound", "", dir, 2, 0.5, "", {}};
  return e;
}

TEST(TraceReads, EventsComeBackReadInTheOrderTheyCame) {
  std::filesystem::path run =
      std::filesystem::temp_directory_path() / ("tv-trace-reads-" + std::to_string(::getpid()));
  std::filesystem::create_directories(run / "profiles" / "a");
  std::ofstream(run / "profiles" / "a" / "x.pt.trace.json")
      << R"({"traceEvents": [{"ph": "X", "name": "enumerate(DataLoader)#x", "ts": 0, "dur": 25,)"
         R"( "pid": 1, "tid": 1}, {"ph": "X", "name": "aten::mm", "ts": 25, "dur": 75,)"
         R"( "pid": 1, "tid": 1}]})";
  std::vector<TrainingEvent> out;
  {
    TraceReads reads(run.string());
    reads.Start(Profiled("profiles/a"));
    reads.Start(Profiled("profiles/missing"));
    reads.Done(&out, /*wait=*/true);
    ASSERT_EQ(out.size(), 2u);
    reads.Start(Profiled("profiles/a"));  // left to the destructor, which waits for it
  }
  ASSERT_TRUE(out[0].profile->figures.data_loader_share);
  EXPECT_NEAR(*out[0].profile->figures.data_loader_share, 0.25, 1e-9);
  EXPECT_EQ(out[0].profile->trace_error, "");
  EXPECT_EQ(out[1].profile->dir, "profiles/missing");
  EXPECT_NE(out[1].profile->trace_error, "");
  std::filesystem::remove_all(run);
}

}  // namespace
}  // namespace tv::trace_reads_test

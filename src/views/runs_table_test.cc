#include "views/runs_table.h"

#include <gtest/gtest.h>

namespace tv::runs_table_test {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    out.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

TEST(RunsTable, OneLinePerRunWithUnknownsAsDashesAndGoneRunsMarked) {
  RunRecord known;
  known.name = "train";
  known.start_t = 1796047509;
  known.duration_s = 3725;
  known.gpu_count = 2;
  known.busy_ratio = 0.274;
  known.gpu_hours = 2.07;
  known.wasted_gpu_hours = 1.5;
  known.energy_kwh = 0.83;
  known.health_score = 72;
  known.exit_code = 0;
  RunRecord old;
  old.name = "a-very-long-run-name-that-does-not-fit";
  old.signal = 9;
  old.exit_code = 137;
  old.missing = true;
  std::vector<std::string> lines = Lines(FormatRunsTable({known, old}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].substr(0, 5), "START");
  EXPECT_NE(lines[1].find("train"), std::string::npos);
  EXPECT_NE(lines[1].find("1:02:05"), std::string::npos);
  EXPECT_NE(lines[1].find("27%"), std::string::npos);
  EXPECT_NE(lines[1].find("2.07"), std::string::npos);
  EXPECT_NE(lines[1].find("1.50"), std::string::npos);
  EXPECT_NE(lines[1].find("0.830"), std::string::npos);
  EXPECT_NE(lines[1].find("72"), std::string::npos);
  EXPECT_EQ(lines[2].substr(0, 1), "-") << "no start time";
  EXPECT_NE(lines[2].find("a-very-long-run-name-th~"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("sig 9 (missing)"), std::string::npos) << lines[2];
  EXPECT_LE(lines[1].size(), 110u);
  EXPECT_EQ(lines[1].size(), lines[0].size() - 4 + 1) << "columns line up:\n"
                                                      << lines[0] << "\n"
                                                      << lines[1];
}

TEST(RunsTable, StatsTextSaysTheNumbers) {
  RunRecord a;
  a.name = "a";
  a.run_dir = "/runs/a";
  a.duration_s = 3600;
  a.gpu_hours = 4;
  a.busy_gpu_hours = 1;
  a.wasted_gpu_hours = 3;
  a.busy_ratio = 0.25;
  a.findings = {{"input-bound", "warning"}};
  std::vector<RunRecord> runs = {a};
  std::string text = FormatRunStats(ComputeRunStats(runs));
  EXPECT_EQ(text,
            "trainvitals: 1 run\n"
            "  Duration  total 1:00:00, mean 1:00:00\n"
            "  GPU       4.00 GPU-h held, 1.00 busy (25%), 3.00 wasted\n"
            "  Low use   1 run busy under 30%, holding 4.00 GPU-h\n"
            "  Wasters   (GPU-hours held but idle, the most first)\n"
            "       3.00 GPU-h  busy  25%  a  /runs/a\n"
            "  Findings  (runs with each)\n"
            "          1  input-bound\n");
  EXPECT_EQ(FormatRunStats(ComputeRunStats({})), "trainvitals: 0 runs\n");
  // A few seconds on a GPU is not nothing.
  runs[0].gpu_hours = 0.00014;
  runs[0].busy_gpu_hours = 0;
  EXPECT_NE(FormatRunStats(ComputeRunStats(runs)).find("  GPU       <0.001 GPU-h held, 0.00 busy"),
            std::string::npos);
}

}  // namespace
}  // namespace tv::runs_table_test

#include "views/report/samples.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

namespace tv::samples_test {
namespace {

TEST(ReportSamples, ColumnsOnlyForMetricsSomeRowHolds) {
  RunSeries s = ParseRunSeries(
      R"({"t":100.5,"elapsed_s":1,"host":{"cpu_util_ratio":0.25,"load1":3},"job":{"cpu_cores":2}}
{"t":101.5,"elapsed_s":2,"host":{"cpu_util_ratio":0.5},"training":{"steps_per_second":12.5}}
)",
      "samples.jsonl");
  ASSERT_EQ(s.elapsed_s, (std::vector<double>{1, 2}));
  EXPECT_EQ(*s.start_t, 99.5);
  ASSERT_EQ(s.series.size(), 3u);
  EXPECT_EQ(s.series[0].label, "host CPU");
  EXPECT_EQ(s.series[0].values, (std::vector<float>{0.25f, 0.5f}));
  EXPECT_EQ(s.series[1].label, "job cores");
  EXPECT_TRUE(std::isnan(s.series[1].values[1]));  // absent, not 0
  EXPECT_EQ(s.series[2].label, "steps/s");
  EXPECT_TRUE(std::isnan(s.series[2].values[0]));
  EXPECT_EQ(s.series[2].values[1], 12.5f);
}

TEST(ReportSamples, GpusByTheirIndexEvenWhenOneAppearsLater) {
  RunSeries s = ParseRunSeries(
      R"({"t":1,"elapsed_s":1,"gpus":[{"index":1,"util_ratio":0.5,"power_watts":300}]}
{"t":2,"elapsed_s":2,"gpus":[{"index":0,"util_ratio":0.1},{"index":1,"util_ratio":0.75}]}
)",
      "x");
  ASSERT_EQ(s.series.size(), 3u);
  EXPECT_EQ(s.series[0].label, "GPU 0 util");
  EXPECT_TRUE(std::isnan(s.series[0].values[0]));
  EXPECT_EQ(s.series[0].values[1], 0.1f);
  EXPECT_EQ(s.series[1].label, "GPU 1 util");
  EXPECT_EQ(s.series[1].values, (std::vector<float>{0.5f, 0.75f}));
  EXPECT_EQ(s.series[2].label, "GPU 1 power");
  EXPECT_EQ(s.series[2].spec->chart, "power");
}

TEST(ReportSamples, SkipsLinesThatAreNotJsonButNotTheCutLastLine) {
  RunSeries s = ParseRunSeries(
      "{\"t\":1,\"elapsed_s\":1,\"host\":{\"cpu_util_ratio\":0.5}}\n"
      "garbage\n"
      "{\"t\":2,\"elapsed_s\":2,\"host\":{\"cpu_util_ratio\":0.5}\n"  // truncated object
      "{\"note\":\"no t: not a row\"}\n"
      "{\"t\":3,\"elapsed_s\":3,\"host\":{\"cpu_ut",  // cut while written
      "samples.jsonl");
  EXPECT_EQ(s.elapsed_s, (std::vector<double>{1}));
  EXPECT_EQ(s.skipped, 2u);
  EXPECT_EQ(s.first_skipped, "samples.jsonl:2: not JSON");
}

TEST(ReportSamples, LinesLongerThanAReadAreReadLongerThanTheCapSkipped) {
  auto row = [](int t, size_t junk) {
    return fmt::format(R"({{"t":{},"elapsed_s":{},"junk":"{}","host":{{"cpu_util_ratio":0.5}}}})",
                       t, t, std::string(junk, 'x')) +
           "\n";
  };
  // 3 MiB: more than one 1 MiB read; 5 MiB: over kMaxJsonlLineBytes.
  std::string text = row(1, 3 << 20) + row(2, 5 << 20) + row(3, 0);
  RunSeries s = ParseRunSeries(text, "x");
  ASSERT_EQ(s.elapsed_s.size(), 2u);
  EXPECT_EQ(s.elapsed_s, (std::vector<double>{1, 3}));
  EXPECT_EQ(s.long_lines, 1u);
  EXPECT_EQ(s.long_lines_note, "skipped 1 line longer than 4 MiB in x (line 2)");
  EXPECT_EQ(s.skipped, 0u);
}

TEST(ReportSamples, ValidJsonThatIsNoRowSaysWhichKey) {
  RunSeries s = ParseRunSeries("{\"t\":1,\"host\":[1]}\n{\"t\":2}\n", "samples.jsonl");
  EXPECT_EQ(s.skipped, 1u);
  EXPECT_EQ(s.first_skipped,
            "samples.jsonl:1: valid JSON but not a row of samples.jsonl (key host: expected an "
            "object, got an array)");
}

TEST(ReportSamples, EachRankHasItsStepsPerSecondAndDataWaitAfterTheRunsOwn) {
  RunSeries s = ParseRunSeries(
      R"({"t":1,"elapsed_s":1,"training":{"steps_per_second":5,"ranks":[{"rank":1,"pid":11,"steps":0,"data_wait_ratio":0.5},{"rank":0,"pid":10,"steps":0}]}}
{"t":3,"elapsed_s":3,"training":{"ranks":[{"rank":0,"pid":10,"steps":20},{"rank":1,"pid":11,"steps":10,"data_wait_ratio":0.25}]}}
{"t":4,"elapsed_s":4,"training":{"ranks":[{"rank":0,"pid":10,"steps":30},{"rank":1,"pid":11,"steps":11}]}}
)",
      "x");
  std::vector<std::string> labels;
  for (const Series& series : s.series) labels.push_back(series.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"steps/s", "rank 0 steps/s", "rank 1 steps/s",
                                              "rank 1 data wait"}));
  EXPECT_TRUE(s.series[3].per_rank);
  EXPECT_EQ(s.series[3].rank, 1);
  EXPECT_EQ(s.series[3].values[0], 0.5f);
  EXPECT_EQ(s.series[3].values[1], 0.25f);
  EXPECT_TRUE(std::isnan(s.series[3].values[2]));
  // The steps' difference over the elapsed time between rows; none at the first row.
  EXPECT_TRUE(std::isnan(s.series[1].values[0]));
  EXPECT_EQ(s.series[1].values[1], 10.0f);
  EXPECT_EQ(s.series[1].values[2], 10.0f);
  EXPECT_EQ(s.series[2].values[1], 5.0f);
  EXPECT_EQ(s.series[2].values[2], 1.0f);
  EXPECT_EQ(s.ranks_left_out, 0u);
}

TEST(ReportSamples, ProcessesWithoutARankAreToldApartByTheirPid) {
  RunSeries s = ParseRunSeries(
      R"({"t":1,"elapsed_s":1,"training":{"ranks":[{"rank":-1,"pid":7,"steps":1},{"rank":-1,"pid":8,"steps":1}]}}
{"t":2,"elapsed_s":2,"training":{"ranks":[{"rank":-1,"pid":7,"steps":3},{"rank":-1,"pid":8,"steps":2}]}}
)",
      "x");
  ASSERT_EQ(s.series.size(), 2u);
  EXPECT_EQ(s.series[0].label, "pid 7 steps/s");
  EXPECT_EQ(s.series[0].values[1], 2.0f);
  EXPECT_EQ(s.series[1].label, "pid 8 steps/s");
  EXPECT_EQ(s.series[1].values[1], 1.0f);
}

TEST(ReportSamples, RanksPastTheLimitAreCountedNotDrawn) {
  std::string text;
  for (int row = 0; row < 2; ++row) {
    std::string ranks;
    for (size_t r = 0; r < kMaxRankSeries + 3; ++r) {
      ranks += fmt::format("{}{{\"rank\":{},\"pid\":{},\"steps\":{},\"data_wait_ratio\":0.1}}",
                           r == 0 ? "" : ",", r, 100 + r, row * 10);
    }
    text += fmt::format(R"({{"t":{},"elapsed_s":{},"training":{{"ranks":[{}]}}}})", row + 1,
                        row + 1, ranks) +
            "\n";
  }
  RunSeries s = ParseRunSeries(text, "x");
  EXPECT_EQ(s.series.size(), 2 * kMaxRankSeries);
  EXPECT_EQ(s.ranks_left_out, 3u);
  EXPECT_EQ(s.series.back().label, fmt::format("rank {} data wait", kMaxRankSeries - 1));
}

}  // namespace
}  // namespace tv::samples_test

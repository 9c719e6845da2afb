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

}  // namespace
}  // namespace tv::samples_test

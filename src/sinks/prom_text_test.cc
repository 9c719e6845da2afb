#include "sinks/prom_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/metrics.h"

namespace tv {
namespace {

size_t IndexOf(std::span<const MetricDef> defs, std::string_view name) {
  for (size_t i = 0; i < defs.size(); ++i) {
    if (defs[i].name == name) return i;
  }
  ADD_FAILURE() << "no metric " << name;
  return 0;
}

Row SampleRow() {
  Row row;
  row.values.resize(SampleMetrics().size());
  row.values[IndexOf(SampleMetrics(), "processes")] = Stat{3.5, 4, 4, 10};
  row.values[IndexOf(SampleMetrics(), "cpu_energy_joules")] = Stat{10, 12, 12.5, 10};
  GpuRow gpu;
  gpu.index = 1;
  gpu.mig_instance = 3;
  gpu.values.resize(GpuMetrics().size());
  gpu.values[IndexOf(GpuMetrics(), "memory_used_bytes")] = Stat{17179869184.0, 2e10, 1, 10};
  gpu.values[IndexOf(GpuMetrics(), "energy_joules")] = Stat{1, 2, 300.25, 10};
  row.gpus.push_back(gpu);
  return row;
}

PromLabels SampleLabels() { return PromLabels{"node-1", "train", {{1, 3, "NVIDIA A100"}}}; }

TEST(RenderPrometheus, GaugeIsTheIntervalMeanWithHelpAndType) {
  std::string text = RenderPrometheus(SampleRow(), SampleLabels(), PromFormat::kText004);
  EXPECT_NE(text.find("# HELP trainvitals_job_processes Processes in the job's tree.\n"
                      "# TYPE trainvitals_job_processes gauge\n"
                      "trainvitals_job_processes{host=\"node-1\",run=\"train\"} 3.5\n"),
            std::string::npos)
      << text;
}

TEST(RenderPrometheus, CounterIsTheLastValueWithTotalSuffix) {
  std::string text = RenderPrometheus(SampleRow(), SampleLabels(), PromFormat::kText004);
  EXPECT_NE(
      text.find("# TYPE trainvitals_host_cpu_energy_joules_total counter\n"
                "trainvitals_host_cpu_energy_joules_total{host=\"node-1\",run=\"train\"} 12.5\n"),
      std::string::npos)
      << text;
}

TEST(RenderPrometheus, GpuSeriesCarryIndexModelAndMig) {
  std::string text = RenderPrometheus(SampleRow(), SampleLabels(), PromFormat::kText004);
  EXPECT_NE(text.find("trainvitals_gpu_memory_used_bytes{host=\"node-1\",run=\"train\",gpu=\"1\","
                      "gpu_model=\"NVIDIA A100\",mig=\"3\"} 17179869184\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("trainvitals_gpu_energy_joules_total{"), std::string::npos);
}

TEST(RenderPrometheus, AbsentValuesAreLeftOutNotZero) {
  std::string text = RenderPrometheus(SampleRow(), SampleLabels(), PromFormat::kText004);
  EXPECT_EQ(text.find("trainvitals_host_cpu_util_ratio"), std::string::npos);
  EXPECT_EQ(text.find("trainvitals_gpu_power_watts"), std::string::npos);
  EXPECT_EQ(text.find("# EOF"), std::string::npos);
  EXPECT_EQ(RenderPrometheus(Row{}, SampleLabels(), PromFormat::kText004), "");
}

TEST(RenderPrometheus, OpenMetricsNamesCounterFamilyWithoutTotalAndEndsWithEof) {
  std::string text = RenderPrometheus(SampleRow(), SampleLabels(), PromFormat::kOpenMetrics);
  EXPECT_NE(text.find("# TYPE trainvitals_host_cpu_energy_joules counter\n"
                      "trainvitals_host_cpu_energy_joules_total{"),
            std::string::npos)
      << text;
  EXPECT_TRUE(text.ends_with("\n# EOF\n")) << text;
  EXPECT_EQ(RenderPrometheus(Row{}, SampleLabels(), PromFormat::kOpenMetrics), "# EOF\n");
}

TEST(RenderPrometheus, NoModelLabelWhenUnknownAndNoMigForWholeGpu) {
  Row row = SampleRow();
  row.gpus[0].mig_instance = -1;
  std::string text = RenderPrometheus(row, PromLabels{"h", "r", {}}, PromFormat::kText004);
  EXPECT_NE(text.find("trainvitals_gpu_memory_used_bytes{host=\"h\",run=\"r\",gpu=\"1\"} "),
            std::string::npos)
      << text;
}

TEST(PromEscape, LabelValuesEscapeBackslashQuoteAndNewline) {
  std::string out;
  AppendEscapedLabelValue("a\\b\"c\nd", &out);
  EXPECT_EQ(out, "a\\\\b\\\"c\\nd");
  std::string text =
      RenderPrometheus(SampleRow(), PromLabels{"h\"1", "x\ny", {}}, PromFormat::kText004);
  EXPECT_NE(text.find("{host=\"h\\\"1\",run=\"x\\ny\"}"), std::string::npos) << text;
}

TEST(PromEscape, HelpEscapesQuotesOnlyInOpenMetrics) {
  std::string plain, om;
  AppendEscapedHelp("say \"hi\"\\\n", PromFormat::kText004, &plain);
  AppendEscapedHelp("say \"hi\"\\\n", PromFormat::kOpenMetrics, &om);
  EXPECT_EQ(plain, "say \"hi\"\\\\\\n");
  EXPECT_EQ(om, "say \\\"hi\\\"\\\\\\n");
}

TEST(PromValue, SpecialValuesAndRoundTrip) {
  std::string out;
  for (double v : {0.1, 1e21, std::nan(""), -std::numeric_limits<double>::infinity()}) {
    AppendPromValue(v, &out);
    out.push_back(' ');
  }
  EXPECT_EQ(out, "0.1 1e+21 NaN -Inf ");
}

TEST(WantsOpenMetrics, FromAcceptHeader) {
  EXPECT_TRUE(
      WantsOpenMetrics("application/openmetrics-text;version=1.0.0,application/"
                       "openmetrics-text;version=0.0.1;q=0.75,"
                       "text/plain;version=0.0.4;q=0.5,*/*;q=0.1"));
  EXPECT_FALSE(WantsOpenMetrics("text/plain;version=0.0.4"));
  EXPECT_FALSE(WantsOpenMetrics(""));
}

}  // namespace
}  // namespace tv

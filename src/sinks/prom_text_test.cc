#include "sinks/prom_text.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/metrics.h"

namespace tv::prom_text_test {
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

PromLabels SampleLabels() {
  PromLabels labels{"node-1", "train", {{1, 3, "NVIDIA A100"}}};
  labels.outside_process_names = true;
  return labels;
}

TEST(RenderPrometheus, GaugeIsTheIntervalMeanWithHelpAndType) {
  std::string text = RenderPrometheus(SampleRow(), SampleLabels(), PromFormat::kText004);
  EXPECT_NE(text.find("# HELP trainvitals_job_processes Processes in the job's tree.\n"
                      "# TYPE trainvitals_job_processes gauge\n"
                      "trainvitals_job_processes{host=\"node-1\",run=\"train\"} 3.5\n"),
            std::string::npos)
      << text;
}

TEST(RenderPrometheus, HealthScoreAndEachFindingSeenSoFar) {
  Row row = SampleRow();
  row.health_score = 72;
  row.findings = {{"input-bound", "warning", true}, {"throttled", "info", false}};
  std::string text = RenderPrometheus(row, SampleLabels(), PromFormat::kText004);
  EXPECT_NE(text.find("# TYPE trainvitals_health_score gauge\n"
                      "trainvitals_health_score{host=\"node-1\",run=\"train\"} 72\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("# TYPE trainvitals_finding_active gauge\n"
                "trainvitals_finding_active{host=\"node-1\",run=\"train\",finding=\"input-"
                "bound\",severity=\"warning\"} 1\n"
                "trainvitals_finding_active{host=\"node-1\",run=\"train\",finding=\"throttled\","
                "severity=\"info\"} 0\n"),
      std::string::npos)
      << text;
  // Before the analysis judged anything: neither family.
  std::string none = RenderPrometheus(SampleRow(), SampleLabels(), PromFormat::kText004);
  EXPECT_EQ(none.find("trainvitals_health_score"), std::string::npos);
  EXPECT_EQ(none.find("trainvitals_finding_active"), std::string::npos);
}

TEST(RenderPrometheus, CounterIsTheLastValueWithTotalSuffix) {
  std::string text = RenderPrometheus(SampleRow(), SampleLabels(), PromFormat::kText004);
  EXPECT_NE(
      text.find("# TYPE trainvitals_host_cpu_energy_joules_total counter\n"
                "trainvitals_host_cpu_energy_joules_total{host=\"node-1\",run=\"train\"} 12.5\n"),
      std::string::npos)
      << text;
}

TEST(RenderPrometheus, TrainingStateIsAGaugeOfItsLastValueAndStepsCarryTheRank) {
  Row row = SampleRow();
  row.values[IndexOf(SampleMetrics(), "epoch")] = Stat{1.5, 2, 2, 10};
  row.training.ranks = {{0, 100, 40, 39}, {1, 101, 38, std::nullopt}};
  std::string text = RenderPrometheus(row, SampleLabels(), PromFormat::kText004);
  EXPECT_NE(text.find("# TYPE trainvitals_training_epoch gauge\n"
                      "trainvitals_training_epoch{host=\"node-1\",run=\"train\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE trainvitals_training_process_steps_total counter\n"
                      "trainvitals_training_process_steps_total{host=\"node-1\",run=\"train\",rank="
                      "\"0\",pid=\"100\"} 40\n"
                      "trainvitals_training_process_steps_total{host=\"node-1\",run=\"train\",rank="
                      "\"1\",pid=\"101\"} 38\n"),
            std::string::npos)
      << text;
}

TEST(RenderPrometheus, EachRankThatTimesItsDataWaitHasItsOwnSeries) {
  Row row = SampleRow();
  row.training.ranks = {{.rank = 0, .pid = 100, .steps = 40, .data_wait_ratio = 0.25},
                        {.rank = 1, .pid = 101, .steps = 38},
                        {.rank = 2, .pid = 102, .steps = 41, .data_wait_ratio = 0}};
  std::string text = RenderPrometheus(row, SampleLabels(), PromFormat::kText004);
  EXPECT_NE(
      text.find("# HELP trainvitals_training_process_data_wait_ratio The share of the last "
                "interval one training process waited for its next batch (markers), by rank.\n"
                "# TYPE trainvitals_training_process_data_wait_ratio gauge\n"
                "trainvitals_training_process_data_wait_ratio{host=\"node-1\",run=\"train\","
                "rank=\"0\",pid=\"100\"} 0.25\n"
                "trainvitals_training_process_data_wait_ratio{host=\"node-1\",run=\"train\","
                "rank=\"2\",pid=\"102\"} 0\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.find("trainvitals_training_process_data_wait_ratio{host=\"node-1\",run=\"train\","
                      "rank=\"1\""),
            std::string::npos)
      << "rank 1 does not time its wait: no series, not 0";
  // No rank times it: no family at all.
  row.training.ranks[0].data_wait_ratio.reset();
  row.training.ranks[2].data_wait_ratio.reset();
  text = RenderPrometheus(row, SampleLabels(), PromFormat::kText004);
  EXPECT_EQ(text.find("trainvitals_training_process_data_wait_ratio"), std::string::npos) << text;
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

std::vector<std::string> LinesStartingWith(const std::string& text, std::string_view prefix) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (line.starts_with(prefix)) lines.push_back(line);
    at = end + 1;
  }
  return lines;
}

TEST(RenderPrometheus, ProcessSeriesAreTheTopEightByMemoryWithOwner) {
  Row row = SampleRow();
  row.gpus[0].mig_instance = -1;
  // Ten processes, memory 1..10 GB, in no order; pid 100+k has k GB.
  for (int k : {3, 10, 1, 7, 5, 2, 9, 4, 8, 6}) {
    GpuProcess p;
    p.pid = 100 + k;
    p.name = fmt::format("p{}", k);
    p.is_job = k == 10;
    p.memory_bytes = k * 1e9;
    if (k == 10) p.sm_util_ratio = 0.75;
    if (k == 1) p.sm_util_ratio = 0.5;  // not in the top 8: left out of both families
    row.gpus[0].processes.push_back(p);
  }
  std::string text = RenderPrometheus(row, SampleLabels(), PromFormat::kText004);
  auto mem = LinesStartingWith(text, "trainvitals_gpu_process_memory_bytes{");
  ASSERT_EQ(mem.size(), 8u) << text;
  EXPECT_EQ(mem[0],
            "trainvitals_gpu_process_memory_bytes{host=\"node-1\",run=\"train\",gpu=\"1\","
            "pid=\"110\",name=\"p10\",owner=\"job\"} 10000000000");
  EXPECT_EQ(mem[7],
            "trainvitals_gpu_process_memory_bytes{host=\"node-1\",run=\"train\",gpu=\"1\","
            "pid=\"103\",name=\"p3\",owner=\"other\"} 3000000000");
  EXPECT_EQ(text.find("pid=\"101\""), std::string::npos) << text;
  EXPECT_EQ(text.find("pid=\"102\""), std::string::npos) << text;
  auto sm = LinesStartingWith(text, "trainvitals_gpu_process_sm_util_ratio{");
  ASSERT_EQ(sm.size(), 1u) << text;
  EXPECT_TRUE(sm[0].ends_with("pid=\"110\",name=\"p10\",owner=\"job\"} 0.75")) << sm[0];
  // HELP and TYPE once per family.
  EXPECT_EQ(LinesStartingWith(text, "# TYPE trainvitals_gpu_process_memory_bytes gauge").size(),
            1u);
  EXPECT_EQ(LinesStartingWith(text, "# HELP trainvitals_gpu_process_sm_util_ratio ").size(), 1u);
}

TEST(RenderPrometheus, ProcessNamesAreEscapedAndLeftOutWhenUnknown) {
  Row row = SampleRow();
  GpuProcess odd;
  odd.pid = 7;
  odd.name = "a\"b\\c\nd";
  odd.memory_bytes = 2;
  GpuProcess nameless;
  nameless.pid = 8;
  nameless.memory_bytes = 1;
  GpuProcess no_memory;  // shown only where a value is known
  no_memory.pid = 9;
  row.gpus[0].processes = {odd, nameless, no_memory};
  std::string text = RenderPrometheus(row, SampleLabels(), PromFormat::kOpenMetrics);
  EXPECT_NE(text.find("mig=\"3\",pid=\"7\",name=\"a\\\"b\\\\c\xE2\x90\x8A"
                      "d\",owner=\"other\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("mig=\"3\",pid=\"8\",owner=\"other\"} 1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("pid=\"9\""), std::string::npos) << text;
  EXPECT_EQ(text.find("trainvitals_gpu_process_sm_util_ratio"), std::string::npos) << text;
}

TEST(PromEscape, LabelValuesEscapeBackslashAndQuoteAndShowNewlines) {
  std::string out;
  AppendEscapedLabelValue("a\\b\"c\nd", PromFormat::kText004, &out);
  EXPECT_EQ(out,
            "a\\\\b\\\"c\xE2\x90\x8A"
            "d");  // the newline as its picture "␊"
  std::string text =
      RenderPrometheus(SampleRow(), PromLabels{"h\"1", "x\ny", {}}, PromFormat::kText004);
  EXPECT_NE(text.find("{host=\"h\\\"1\",run=\"x\xE2\x90\x8Ay\"}"), std::string::npos) << text;
}

TEST(PromEscape, HostileProcessNameLeavesNoControlByte) {
  Row row = SampleRow();
  GpuProcess hostile;
  hostile.pid = 7;
  hostile.name = "\x1b]0;owned\a\x1b[2J\r=cmd|\x7f\xC2\x9B";
  hostile.memory_bytes = 2;
  hostile.is_job = true;
  row.gpus[0].processes = {hostile};
  for (PromFormat format : {PromFormat::kText004, PromFormat::kOpenMetrics}) {
    std::string text = RenderPrometheus(row, SampleLabels(), format);
    for (char c : text) {
      unsigned char b = static_cast<unsigned char>(c);
      EXPECT_TRUE(c == '\n' || (b >= 0x20 && b != 0x7F)) << static_cast<int>(b);
    }
    EXPECT_NE(text.find("name=\"\xE2\x90\x9B]0;owned\xE2\x90\x87\xE2\x90\x9B[2J\xE2\x90\x8D=cmd|"
                        "\xE2\x90\xA1\xEF\xBF\xBD\""),
              std::string::npos)
        << text;
  }
}

TEST(PromEscape, InvalidUtf8BecomesTheReplacementCharacter) {
  // A 15-byte kernel name cut in the middle of the eighth "é" (C3 A9).
  std::string cut;
  for (int i = 0; i < 7; ++i) cut += "\xC3\xA9";
  cut += "\xC3";
  for (PromFormat format : {PromFormat::kText004, PromFormat::kOpenMetrics}) {
    std::string out;
    AppendEscapedLabelValue(cut, format, &out);
    EXPECT_EQ(out, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xEF\xBF\xBD");
  }
  std::string out;
  // Stray continuation, overlong "/", surrogate, beyond U+10FFFF; valid 4-byte kept.
  AppendEscapedLabelValue(
      "a\x80"
      "b\xC0\xAF\xED\xA0\x80\xF4\x90\x80\x80\xF0\x9F\x98\x80\"",
      PromFormat::kText004, &out);
  EXPECT_EQ(out,
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xF0\x9F\x98\x80\\\"");
}

TEST(RenderPrometheus, NamesOfProcessesOutsideTheJobOnlyWhenAllowed) {
  Row row = SampleRow();
  GpuProcess mine, theirs;
  mine.pid = 7;
  mine.name = "python";
  mine.is_job = true;
  mine.memory_bytes = 2;
  theirs.pid = 8;
  theirs.name = "secret-project";
  theirs.memory_bytes = 1;
  row.gpus[0].processes = {mine, theirs};
  PromLabels labels = SampleLabels();
  labels.outside_process_names = false;
  std::string text = RenderPrometheus(row, labels, PromFormat::kText004);
  EXPECT_NE(text.find("pid=\"7\",name=\"python\",owner=\"job\"}"), std::string::npos) << text;
  EXPECT_NE(text.find("pid=\"8\",owner=\"other\"}"), std::string::npos) << text;
  EXPECT_EQ(text.find("secret-project"), std::string::npos) << text;
  labels.outside_process_names = true;
  text = RenderPrometheus(row, labels, PromFormat::kText004);
  EXPECT_NE(text.find("pid=\"8\",name=\"secret-project\",owner=\"other\"}"), std::string::npos);
}

TEST(RenderPrometheus, EverySeriesOfARunOfAJobCarriesItsJobAndNoneWithout) {
  Row row = SampleRow();
  row.health_score = 80;
  row.goodput_ratio = 0.5;
  row.findings = {{"input-bound", "warning", true}};
  row.alerts = {{"gpu-idle", "warning", 1, true}};
  row.time_spent_s = {{"productive", 12}};
  row.run_money = 1.5;
  row.run_currency = "EUR";
  RankSteps rank;
  rank.rank = 0;
  rank.pid = 7;
  rank.steps = 10;
  rank.data_wait_ratio = 0.1;
  row.training.ranks = {rank};
  GpuProcess p;
  p.pid = 7;
  p.name = "python";
  p.is_job = true;
  p.memory_bytes = 2;
  row.gpus[0].processes = {p};
  PromLabels labels = SampleLabels();
  labels.job = "10.0.0.1:29500@2026-11-30T14:05Z";
  for (PromFormat format : {PromFormat::kText004, PromFormat::kOpenMetrics}) {
    std::string text = RenderPrometheus(row, labels, format);
    std::string_view rest = text;
    int series = 0;
    while (!rest.empty()) {
      std::string_view line = rest.substr(0, rest.find('\n'));
      rest.remove_prefix(std::min(rest.size(), line.size() + 1));
      if (line.empty() || line.starts_with("#")) continue;
      ++series;
      EXPECT_NE(
          line.find("{host=\"node-1\",run=\"train\",job=\"10.0.0.1:29500@2026-11-30T14:05Z\""),
          std::string_view::npos)
          << line;
      EXPECT_EQ(line.find("job="), line.rfind("job=")) << "one job label: " << line;
    }
    EXPECT_GE(series, 12) << text;
  }
  labels.job.clear();
  EXPECT_EQ(RenderPrometheus(row, labels, PromFormat::kText004).find("job=\""), std::string::npos);
  // The node's series (`serve`) never take it: its jobs label their own.
  labels.job = "4242";
  labels.node = true;
  EXPECT_EQ(RenderPrometheus(row, labels, PromFormat::kText004).find("job=\""), std::string::npos);
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

TEST(RenderPrometheus, RunLevelCostFiguresAreOneSeriesEach) {
  Row row;
  row.run_gpus_used = 1;
  row.run_gpu_busy_ratio = 0.4;
  row.run_gpu_energy_joules = 1250;
  row.run_money = 0.0125;
  row.run_currency = "EUR";
  std::string text = RenderPrometheus(row, SampleLabels(), PromFormat::kText004);
  for (const char* line :
       {"# TYPE trainvitals_run_gpus_used gauge\n"
        "trainvitals_run_gpus_used{host=\"node-1\",run=\"train\"} 1\n",
        "# TYPE trainvitals_run_gpu_busy_ratio gauge\n"
        "trainvitals_run_gpu_busy_ratio{host=\"node-1\",run=\"train\"} 0.4\n",
        "# TYPE trainvitals_run_gpu_energy_joules_total counter\n"
        "trainvitals_run_gpu_energy_joules_total{host=\"node-1\",run=\"train\"} 1250\n",
        "# TYPE trainvitals_run_cost_total counter\n"
        "trainvitals_run_cost_total{host=\"node-1\",run=\"train\",currency=\"EUR\"} 0.0125\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\nin:\n" << text;
  }
  std::string om = RenderPrometheus(row, SampleLabels(), PromFormat::kOpenMetrics);
  EXPECT_NE(om.find("# TYPE trainvitals_run_cost counter\n"), std::string::npos) << om;
  // Unknown figures are left out, never 0; no money, no cost series.
  row.run_gpu_busy_ratio.reset();
  row.run_money.reset();
  text = RenderPrometheus(row, SampleLabels(), PromFormat::kText004);
  EXPECT_EQ(text.find("trainvitals_run_gpu_busy_ratio"), std::string::npos);
  EXPECT_EQ(text.find("trainvitals_run_cost"), std::string::npos);
  EXPECT_NE(text.find("trainvitals_run_gpu_energy_joules_total"), std::string::npos);
}

}  // namespace
}  // namespace tv::prom_text_test

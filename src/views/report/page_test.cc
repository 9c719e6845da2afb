#include "views/report/page.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "views/report/report.h"

namespace tv::page_test {
namespace {

namespace fs = std::filesystem;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A small run directory: 3 rows with a GPU, two epochs, a finding whose
// message and the command hold markup.
class ReportPage : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tv_report_page_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "meta.json") << R"js({"schema_version":1,"start_t":1000,
      "host":"node<1>", "command":["python","-c","print('</script><script>alert(1)</script>')"],
      "gpus":[{"index":0,"name":"NVIDIA H100 80GB HBM3"}]})js";
    std::ofstream samples(dir_ / "samples.jsonl");
    for (int s = 1; s <= 3; ++s) {
      samples << R"({"t":)" << 1000 + s << R"(,"elapsed_s":)" << s
              << R"(,"host":{"cpu_util_ratio":0.5},"job":{"cpu_cores":1.5,"memory_bytes":1e9},)"
              << R"("gpus":[{"index":0,"util_ratio":0.9,"memory_used_bytes":4e9}]})"
              << "\n";
    }
    samples << "not json\n";
    std::ofstream(dir_ / "events.jsonl")
        << R"({"t":1000.5,"type":"phase_begin","pid":1,"rank":-1,"phase":"train"})"
        << "\n"
        << R"({"t":1002.5,"type":"phase_end","pid":1,"rank":-1,"phase":"train"})"
        << "\n"
        << R"({"t":1001.5,"type":"alert_firing","alert":"GpuIdle","gpu":0})"
        << "\n";
    std::ofstream(dir_ / "summary.json") << R"({"duration_s":3.2,"exit_code":0,
      "health":{"score":87,"goodput":{"productive_ratio":0.6,
        "percent":{"waiting_for_nothing":5,"data_wait":30,"productive":60,"startup":10}}},
      "epochs":[{"epoch":0,"start_t":1000.5,"duration_s":1,"steps":10,"logs":{"loss":0.5}},
                {"epoch":1,"start_t":1001.5,"duration_s":1,"steps":10,"logs":{"loss":0.25}}],
      "findings":[{"id":"input-bound","severity":"warning","opened_t":1001,
                   "message":"waits <b>bold</b> & more","advice":["use </script> workers"]}]})";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReportPage, TheHeaderSaysWhereTheTimeWentInTheSummarysWords) {
  ReportRun run = LoadReportRun(dir_.string());
  std::string page = RenderPage(run, nullptr, 1500);
  EXPECT_NE(page.find("<tr><th>Time</th><td>productive steps 60%, start-up before the first "
                      "step 10%, waiting for input 30%</td></tr>"),
            std::string::npos);
}

TEST_F(ReportPage, UserTextCannotCloseTheScriptsOrAddMarkup) {
  ReportRun run = LoadReportRun(dir_.string());
  std::string page = RenderPage(run, nullptr, 1500);
  // The data, uPlot and the page's script: three elements, each closed once.
  EXPECT_EQ(Count(page, "<script"), 3u);
  EXPECT_EQ(Count(page, "</script>"), 3u);
  EXPECT_EQ(Count(page, "<b>"), 0u);
  EXPECT_NE(page.find("waits &lt;b&gt;bold&lt;/b&gt; &amp; more"), std::string::npos);
  EXPECT_NE(page.find("node&lt;1&gt;"), std::string::npos);
  EXPECT_NE(page.find("use &lt;/script&gt; workers"), std::string::npos);
}

TEST_F(ReportPage, DataReadsBackAsJsonWithEverySeriesAndSpan) {
  ReportRun run = LoadReportRun(dir_.string());
  EXPECT_EQ(run.series.skipped, 1u);
  std::string page = RenderPage(run, nullptr, 1500);
  std::string open = "<script id=\"tv-data\" type=\"application/json\">";
  size_t from = page.find(open) + open.size();
  size_t to = page.find("</script>", from);
  nlohmann::json data = nlohmann::json::parse(page.substr(from, to - from));
  const auto& a = data["runs"][0];
  EXPECT_EQ(a["x"], nlohmann::json({1, 2, 3}));
  std::vector<std::string> labels;
  for (const auto& s : a["series"]) labels.push_back(s["label"]);
  EXPECT_EQ(labels, (std::vector<std::string>{"host CPU", "job cores", "job PSS", "GPU 0 util",
                                              "GPU 0 used"}));
  EXPECT_EQ(a["series"][0]["v"], nlohmann::json({50, 50, 50}));  // percent
  EXPECT_EQ(a["series"][4]["v"][0].get<double>(), 3814.7);       // MiB
  std::vector<std::string> kinds;
  for (const auto& s : a["spans"]) kinds.push_back(s[2]);
  EXPECT_EQ(kinds, (std::vector<std::string>{"epoch", "epoch", "phase", "finding", "alert"}));
  EXPECT_EQ(a["spans"][0][0].get<double>(), 0.5);
  EXPECT_TRUE(a["spans"][4][1].is_null());  // the alert never resolved
  EXPECT_EQ(a["spans"][4][3], "GpuIdle (GPU 0)");
}

TEST_F(ReportPage, TablesHoldOneRowPerEpochAndTheHeadline) {
  ReportRun run = LoadReportRun(dir_.string());
  std::string page = RenderPage(run, nullptr, 1500);
  size_t table = page.find("<table id=\"epochs\">");
  ASSERT_NE(table, std::string::npos);
  std::string epochs = page.substr(table, page.find("</table>", table) - table);
  EXPECT_EQ(Count(epochs, "<tr>"), 3u);  // the head and two epochs
  EXPECT_NE(epochs.find("<th>loss</th>"), std::string::npos);
  EXPECT_NE(page.find("87 / 100"), std::string::npos);
  EXPECT_NE(page.find("1 × NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_EQ(page.find("id=\"cost\""), std::string::npos);  // no cost in this summary
  EXPECT_NE(page.find("skipped 1 line of samples.jsonl"), std::string::npos);
}

TEST_F(ReportPage, CostTableShowsTheSummarysCostAsWritten) {
  ReportRun run = LoadReportRun(dir_.string());
  nlohmann::ordered_json written = {{"gpus_used", 8},
                                    {"gpu_hours", 16},
                                    {"busy_gpu_hours", 12},
                                    {"busy_basis", "sm_active_ratio"},
                                    {"busy_ratio", 0.75},
                                    {"wasted_gpu_hours", 4},
                                    {"lost", {{"data_wait_ratio", 0.2}}},
                                    {"energy_kwh", 9.5},
                                    {"pue", 1.2},
                                    {"co2e_kg", 4.5},
                                    {"co2e_estimate", true},
                                    {"currency", "EUR"},
                                    {"money", 41.5},
                                    {"epochs",
                                     {{{"epoch", 1},
                                       {"gpu_hours", 2},
                                       {"busy_gpu_hours", 1.5},
                                       {"co2e_kg", 0.25},
                                       {"money", 5}}}}};
  run.cost.emplace();
  ASSERT_TRUE(CostFromJson(written, &*run.cost).ok());  // as LoadReportRun reads it
  std::string page = RenderPage(run, nullptr, 1500);
  size_t table = page.find("<table id=\"cost\">");
  ASSERT_NE(table, std::string::npos);
  std::string cost = page.substr(table, page.find("</table>", table) - table);
  EXPECT_NE(cost.find("<td>GPU hours busy</td><td>12.0 h (by sm_active_ratio)</td>"),
            std::string::npos);
  EXPECT_NE(cost.find("<td>Lost to input waits</td><td>20%</td>"), std::string::npos);
  EXPECT_NE(cost.find("<td>Cost</td><td>41.50 EUR</td>"), std::string::npos);
  EXPECT_NE(cost.find("4.5 kg (grid average estimate)"), std::string::npos);
  EXPECT_NE(cost.find("<td>Energy</td><td>9.5 kWh (PUE 1.2)</td>"), std::string::npos);
  EXPECT_EQ(cost.find("Lost to evaluation"), std::string::npos);  // not measured: no row
  // Each epoch's cost in the epochs table, by epoch number (epoch 0 has none).
  size_t at = page.find("<table id=\"epochs\">");
  std::string epochs = page.substr(at, page.find("</table>", at) - at);
  EXPECT_NE(epochs.find("<th>GPU hours (busy)</th><th>CO2e</th><th>cost</th>"), std::string::npos);
  EXPECT_NE(epochs.find("<td>2.0 h (1.5 h)</td><td>250 g</td><td>5.00 EUR</td></tr>"),
            std::string::npos);
  EXPECT_NE(epochs.find("<td></td><td></td><td></td></tr>"), std::string::npos);
}

TEST_F(ReportPage, CompareShowsBothRuns) {
  ReportRun a = LoadReportRun(dir_.string());
  ReportRun b = LoadReportRun(dir_.string());
  std::string page = RenderPage(a, &b, 1500);
  EXPECT_NE(page.find("<th>A: "), std::string::npos);
  EXPECT_NE(page.find("<th>B: "), std::string::npos);
  EXPECT_NE(page.find("id=\"a-epochs\""), std::string::npos);
  EXPECT_NE(page.find("id=\"b-epochs\""), std::string::npos);
  EXPECT_NE(page.find("\"label\":\"B\""), std::string::npos);
}

TEST_F(ReportPage, AJobPageDrawsEachNodeOnOneTimeAxisWithTheJobsVerdict) {
  std::vector<ReportRun> runs = {LoadReportRun(dir_.string()), LoadReportRun(dir_.string())};
  runs[1].start_t += 7;  // its own clock 7 s ahead, its start 2 s after the first's
  ReportJob job;
  job.id = "42";
  job.nodes = {"gpu-a", "gpu-b"};
  job.clock_offsets_s = {0, -5};
  job.health.score = 61;
  job.health_node = "gpu-b";
  FindingRecord f;
  f.id = "straggler";
  f.opened_t = 1002;
  f.message = "rank 3 is slow";
  f.subject = FindingSubject::Process(3, std::nullopt);
  f.subject.node = "gpu-b";
  job.findings = {f};
  std::string page = RenderJobPage(runs, job, 1500);
  EXPECT_NE(page.find("<h1>trainvitals report: job 42 — 2 nodes</h1>"), std::string::npos);
  EXPECT_NE(page.find("<th>gpu-a</th><th>gpu-b</th>"), std::string::npos);
  EXPECT_NE(page.find("Health: 61 / 100, the health of its lowest node, gpu-b."),
            std::string::npos);
  EXPECT_NE(page.find("<td>straggler</td><td>rank 3, node gpu-b</td>"), std::string::npos);
  std::string open = "<script id=\"tv-data\" type=\"application/json\">";
  size_t from = page.find(open) + open.size();
  nlohmann::json data =
      nlohmann::json::parse(page.substr(from, page.find("</script>", from) - from));
  ASSERT_EQ(data["runs"].size(), 2u);
  EXPECT_EQ(data["runs"][0]["label"], "gpu-a");
  EXPECT_EQ(data["runs"][1]["label"], "gpu-b");
  EXPECT_EQ(data["runs"][0]["x"], nlohmann::json({1, 2, 3}));
  EXPECT_EQ(data["runs"][1]["x"], nlohmann::json({3, 4, 5}));
  EXPECT_EQ(data["runs"][1]["spans"][0][0].get<double>(), 2.5);  // its first epoch, moved too
}

TEST_F(ReportPage, WritesReportHtmlIntoTheRunDirectory) {
  ReportRequest request;
  request.run_dir = dir_.string();
  ReportWritten w = WriteReport(request);
  EXPECT_EQ(w.path, (dir_ / "report.html").string());
  EXPECT_EQ(fs::file_size(w.path), w.bytes);
  EXPECT_EQ(w.skipped_lines, 1u);
  EXPECT_NE(w.first_skipped.find("samples.jsonl:4"), std::string::npos);
}

TEST(ReportSpans, ARunWithoutSummaryTakesItsEpochsFromTheEventsAndKeepsOpenPhasesOpen) {
  std::vector<nlohmann::json> events = {
      {{"t", 100.0}, {"type", "phase_begin"}, {"rank", 1}, {"phase", "train"}},
      {{"t", 101.0}, {"type", "phase_begin"}, {"rank", 0}, {"phase", "train"}},
      {{"t", 105.0}, {"type", "epoch"}, {"epoch", 0}, {"start_t", 101.0}, {"duration_s", 4.0}},
      {{"t", 106.0}, {"type", "phase_end"}, {"rank", 0}, {"phase", "train"}},
      {{"t", 106.5}, {"type", "phase_begin"}, {"rank", 0}, {"phase", "eval"}},
  };
  std::vector<Span> spans = RunSpans(nullptr, {}, events, 100.0, 9.0);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].kind, "epoch");
  EXPECT_EQ(spans[0].label, "epoch 0");
  EXPECT_EQ(spans[0].start_s, 1.0);
  EXPECT_EQ(*spans[0].end_s, 5.0);
  // Rank 0's phases only (the lowest rank), the open one up to the end.
  EXPECT_EQ(spans[1].label, "train");
  EXPECT_EQ(spans[1].start_s, 1.0);
  EXPECT_EQ(*spans[1].end_s, 6.0);
  EXPECT_EQ(spans[2].label, "eval");
  EXPECT_EQ(*spans[2].end_s, 9.0);
}

TEST(ScriptSafe, EscapesEveryLessThanAndLineSeparators) {
  EXPECT_EQ(ScriptSafe(R"({"a":"</script><!--"})"), R"({"a":"\u003c/script>\u003c!--"})");
  EXPECT_EQ(ScriptSafe("\"\xE2\x80\xA8\""), "\"\\u2028\"");
  EXPECT_EQ(HtmlEscape("a&b<c>\"'"), "a&amp;b&lt;c&gt;&quot;&#39;");
}

}  // namespace
}  // namespace tv::page_test

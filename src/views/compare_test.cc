#include "views/compare.h"

#include <gtest/gtest.h>

#include <ctime>

#include "store/summary_fixture.h"

namespace tv::compare_test {
namespace {

using Json = nlohmann::ordered_json;

Json Summary(double duration, double steps_per_s, double wait, std::vector<double> epoch_s) {
  Json epochs = Json::array();
  Json cost_epochs = Json::array();
  for (size_t i = 0; i < epoch_s.size(); ++i) {
    epochs.push_back(
        {{"epoch", i}, {"duration_s", epoch_s[i]}, {"logs", {{"loss", 1.0 / (i + 1)}}}});
    cost_epochs.push_back({{"epoch", i}, {"energy_kwh", epoch_s[i] / 1000}});
  }
  return {
      {"run_dir", "/runs/x"},
      {"duration_s", duration},
      {"training",
       {{"steps_per_second", {{"mean", steps_per_s}, {"max", steps_per_s}}},
        {"data_wait_ratio", {{"mean", wait}, {"max", wait}}}}},
      {"gpus", {{{"index", 0}, {"job_memory_bytes", {{"mean", 1e9}, {"max", 8e9}}}}}},
      {"epochs", epochs},
      {"cost", {{"busy_ratio", 0.5}, {"energy_kwh", duration / 1000}, {"epochs", cost_epochs}}}};
}

// A run compared: its label, its summary.json, its start.
struct Given {
  std::string label;
  Json summary;
  std::optional<double> start_t;
};

Comparison Compare(const std::vector<Given>& given) {
  std::vector<ComparedRun> runs;
  for (const Given& g : given) {
    runs.push_back(ComparedRun{g.label, {SummaryOfJson(g.summary)}, g.start_t, ""});
  }
  return CompareRuns(runs);
}

// The comparison as `compare --json` prints it, and as its table.
Json AsJson(const std::vector<Given>& runs) { return ComparisonJson(Compare(runs)); }
std::string AsText(const std::vector<Given>& runs) { return FormatComparison(Compare(runs)); }

const Json& Figure(const Json& c, std::string_view key) {
  for (const Json& f : c["figures"]) {
    if (f["key"] == key) return f;
  }
  static const Json kNone;
  return kNone;
}

TEST(Compare, ChangesAreAgainstTheFirstRunAndPointsForShares) {
  Json a = Summary(100, 10, 0.30, {40, 40, 20});
  Json b = Summary(80, 13.5, 0.10, {30, 30});
  b["gpus"][0]["job_memory_bytes"]["max"] = 6.4e9;
  const std::vector<Given> c_runs = {{"a", a}, {"b", b}};
  Json c = AsJson(c_runs);
  EXPECT_EQ(Figure(c, "duration_s")["changes"], Json::parse("[null, -0.2]"));
  EXPECT_EQ(Figure(c, "steps_per_second")["changes"], Json::parse("[null, 0.35]"));
  EXPECT_EQ(Figure(c, "data_wait_ratio")["changes"], Json::parse("[null, -0.2]"));  // 20 points
  EXPECT_EQ(Figure(c, "gpu_memory_peak_bytes")["changes"], Json::parse("[null, -0.2]"));
  EXPECT_EQ(Figure(c, "epoch_s")["values"], Json::parse("[33.333333333333336, 30.0]"));
  EXPECT_TRUE(Figure(c, "money").is_null());  // no run has it
  // Epochs both runs have.
  ASSERT_EQ(c["epochs"].size(), 2u);
  EXPECT_EQ(c["epochs"][1]["duration_s"], Json::parse("[40.0, 30.0]"));
  EXPECT_EQ(c["epochs"][1]["energy_kwh"], Json::parse("[0.04, 0.03]"));
  EXPECT_EQ(c["epochs"][1]["loss"], Json::parse("[0.5, 0.5]"));
  std::string text = AsText(c_runs);
  EXPECT_NE(text.find("steps/s                 10                    13.5 +35%\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("data wait               30%                   10% -20 pts\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Epochs every run has (2), by number\n"), std::string::npos) << text;
}

TEST(Compare, AnEpochCutShortOrMissingIsNotMatched) {
  Json a = Summary(100, 10, 0.3, {40, 40});
  Json b = Summary(100, 10, 0.3, {40, 40});
  b["epochs"][1]["complete"] = false;
  const std::vector<Given> c_runs = {{"a", a}, {"b", b}};
  Json c = AsJson(c_runs);
  ASSERT_EQ(c["epochs"].size(), 1u);
  EXPECT_EQ(c["epochs"][0]["epoch"], 0);
  Json no_epochs = {{"duration_s", 5}};
  const std::vector<Given> d_runs = {{"a", a}, {"plain", no_epochs}};
  Json d = AsJson(d_runs);
  EXPECT_TRUE(d["epochs"].empty());
  EXPECT_EQ(Figure(d, "steps_per_second")["values"], Json::parse("[10.0, null]"));
  EXPECT_EQ(Figure(d, "steps_per_second")["changes"], Json::parse("[null, null]"));
  EXPECT_EQ(AsText(d_runs).find("Epochs"), std::string::npos);
}

TEST(Compare, ColumnsAreTheRunsNamesToldApartByTheirStart) {
  Json a = Summary(100, 10, 0.3, {});
  // 2026-12-01 14:27:03 and 15:02:11, local time.
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 11;
  tm.tm_mday = 1;
  tm.tm_hour = 14;
  tm.tm_min = 27;
  tm.tm_sec = 3;
  tm.tm_isdst = -1;
  double t = static_cast<double>(std::mktime(&tm));
  const std::vector<Given> c_runs = {
      {"train.py", a, t}, {"train.py", a, t + 35 * 60 + 8}, {"resnet", a, t}};
  Json c = AsJson(c_runs);
  EXPECT_EQ(c["runs"][0]["label"], "train.py (14:27:03)");
  EXPECT_EQ(c["runs"][1]["label"], "train.py (15:02:11)");
  EXPECT_EQ(c["runs"][2]["label"], "resnet");
  // The same time of day on two days: the date too.
  const std::vector<Given> d_runs = {{"x", a, t}, {"x", a, t + 86400}};
  Json d = AsJson(d_runs);
  EXPECT_EQ(d["runs"][0]["label"], "x (2026-12-01 14:27:03)");
  EXPECT_EQ(d["runs"][1]["label"], "x (2026-12-02 14:27:03)");
  std::string text = AsText(c_runs);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "                        A: train.py (14:27:03)  B: train.py (15:02:11)  C: resnet")
      << text;
}

TEST(Compare, ALongNameIsShortenedInItsColumnAndSaidWhole) {
  Json a = Summary(100, 10, 0.3, {});
  std::string name = "resnet50-imagenet-bs512-amp-lr0.1-warmup5-cosine";
  std::string text = AsText({{name, a}, {"b", a}});
  EXPECT_EQ(text.find("A: " + name + "\nB: b\n\n"), 0u) << text;
  EXPECT_NE(text.find("A: resnet50-imagenet…r0.1-warmup5-cosine  B: b\n"), std::string::npos)
      << text;
}

TEST(Compare, EachRowIsInOneUnitFromItsLargestValue) {
  Json a = Summary(30, 10, 0.3, {});
  Json b = Summary(3700, 10, 0.3, {});
  a["cost"]["gpu_hours"] = 0.0;
  b["cost"]["gpu_hours"] = 1.1 / 60;  // 1.1 GPU-min
  a["cost"]["energy_kwh"] = 0.0004;
  b["cost"]["energy_kwh"] = 2.5;
  a["gpus"][0]["job_memory_bytes"]["max"] = 300.0 * (1 << 20);
  b["gpus"][0]["job_memory_bytes"]["max"] = 12.0 * (1 << 30);
  std::string text = AsText({{"a", a}, {"b", b}});
  EXPECT_NE(text.find("GPU-hours held          0.0 GPU-min           1.1 GPU-min\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("energy                  0.00040 kWh           2.50 kWh +624900%\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("peak GPU memory (job)   0.3 GiB               12.0 GiB +3996%\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("duration                0:00:30               1:01:40 +12233%\n"),
            std::string::npos)
      << text;
}

TEST(Compare, MoneyHasItsCurrencyAndHealthChangesInPoints) {
  Json a = Summary(100, 10, 0.3, {});
  Json b = Summary(100, 10, 0.3, {});
  Json e = Summary(100, 10, 0.3, {});
  a["health"] = {{"score", 84}};
  b["health"] = {{"score", 72}};
  b["cost"]["money"] = 12.4;
  b["cost"]["currency"] = "EUR";
  a["cost"]["money"] = 10.0;
  a["cost"]["currency"] = "EUR";
  e["cost"]["money"] = 3.0;
  e["cost"]["currency"] = "USD";
  const std::vector<Given> c_runs = {{"a", a}, {"b", b}, {"e", e}};
  Json c = AsJson(c_runs);
  EXPECT_EQ(Figure(c, "health")["unit"], "score");
  EXPECT_EQ(Figure(c, "health")["changes"], Json::parse("[null, -12.0, null]"));
  EXPECT_EQ(Figure(c, "money")["currencies"], Json::parse(R"(["EUR", "EUR", "USD"])"));
  // Money in another currency is not compared.
  EXPECT_EQ(Figure(c, "money")["changes"], Json::parse("[null, 0.24, null]"));
  EXPECT_FALSE(c.contains("currency"));
  std::string text = AsText(c_runs);
  EXPECT_NE(text.find("money                   10.00 EUR             12.40 EUR +24%        3.00 "
                      "USD\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("health                  84                    72 -12 pts            -\n"),
            std::string::npos)
      << text;
  // A run without money, first: the others' money keeps its currency.
  const std::vector<Given> d_runs = {{"plain", Summary(100, 10, 0.3, {})}, {"b", b}};
  Json d = AsJson(d_runs);
  EXPECT_EQ(d["currency"], "EUR");
  EXPECT_NE(AsText(d_runs).find("money                   -                     12.40 EUR\n"),
            std::string::npos)
      << AsText(d_runs);
}

TEST(Compare, GpuEnergyBesideTheWholeEnergyAndTheHeadlinesOwnFigures) {
  Json a = Summary(100, 10, 0.3, {});
  Json b = Summary(100, 10, 0.3, {});
  a["cost"]["gpu_energy_kwh"] = 0.0002;
  b["cost"]["gpu_energy_kwh"] = 0.0003;
  b["cost"]["busy_ratio"] = "50 %";  // mistyped: unknown, as every view reads it
  const std::vector<Given> c_runs = {{"a", a}, {"b", b}};
  Json c = AsJson(c_runs);
  const Json& gpu = Figure(c, "gpu_energy_kwh");
  EXPECT_EQ(gpu["what"], "GPU energy");
  EXPECT_EQ(gpu["unit"], "kwh");
  EXPECT_EQ(gpu["values"], Json::parse("[0.0002, 0.0003]"));
  EXPECT_EQ(gpu["changes"], Json::parse("[null, 0.5]"));
  EXPECT_EQ(Figure(c, "gpu_busy_ratio")["values"], Json::parse("[0.5, null]"));
  std::string text = AsText(c_runs);
  EXPECT_NE(text.find("GPU energy              0.20 Wh               0.30 Wh +50%\n"),
            std::string::npos)
      << text;
}

// A node of a job: Summary's figures, started at `start` for `duration`, with
// GPU-hours (held and busy), its host memory's peak and its health.
Json Node(double start, double duration, double steps_per_s, double wait, double gpu_hours,
          double busy_gpu_hours, double memory_max, double health) {
  Json n = Summary(duration, steps_per_s, wait, {duration / 2, duration / 2});
  n["start_t"] = start;
  n["end_t"] = start + duration;
  n["job"] = {{"memory_bytes", {{"mean", memory_max / 2}, {"max", memory_max}}},
              {"cpu_cores", {{"mean", 3.0}, {"max", 4.0}}}};
  n["cost"]["gpu_hours"] = gpu_hours;
  n["cost"]["busy_gpu_hours"] = busy_gpu_hours;
  n["cost"]["gpus_used"] = 8;
  n["health"] = {{"score", health}};
  return n;
}

TEST(Compare, AJobsNodesAreOneColumnEachFigureByItsRule) {
  // Job 41: two nodes, the second started 10 s later and 20 % slower.
  std::vector<RunSummary> job41 = {SummaryOfJson(Node(1000, 100, 10, 0.10, 8, 6, 40e9, 90)),
                                   SummaryOfJson(Node(1010, 100, 8, 0.30, 8, 2, 60e9, 70))};
  std::vector<RunSummary> job42 = {SummaryOfJson(Node(5000, 80, 12, 0.05, 6, 5, 30e9, 95)),
                                   SummaryOfJson(Node(5000, 80, 12, 0.05, 6, 5, 30e9, 93))};
  std::vector<ComparedRun> runs = {{"job 41", job41, 1000.0, "41"},
                                   {"job 42", job42, 5000.0, "42"}};
  Json c = ComparisonJson(CompareRuns(runs));
  EXPECT_EQ(c["runs"][0], Json::parse(R"({"label": "job 41", "job": "41",
                                          "run_dirs": ["/runs/x", "/runs/x"]})"));
  // The span from the first start to the last end; the slowest node's pace.
  EXPECT_EQ(Figure(c, "duration_s")["values"], Json::parse("[110.0, 80.0]"));
  EXPECT_EQ(Figure(c, "steps_per_second")["values"], Json::parse("[8.0, 12.0]"));
  EXPECT_EQ(Figure(c, "data_wait_ratio")["values"], Json::parse("[0.2, 0.05]"));
  // What the job used, summed; the busy share of the sums.
  EXPECT_EQ(Figure(c, "gpu_hours")["values"], Json::parse("[16.0, 12.0]"));
  EXPECT_EQ(Figure(c, "gpu_busy_ratio")["values"], Json::parse("[0.5, 0.8333333333333334]"));
  EXPECT_EQ(Figure(c, "job_cpu_cores")["values"], Json::parse("[6.0, 6.0]"));
  EXPECT_EQ(Figure(c, "energy_kwh")["values"], Json::parse("[0.2, 0.16]"));
  // The largest node's peak, the lowest node's health.
  EXPECT_EQ(Figure(c, "job_memory_peak_bytes")["values"], Json::parse("[60e9, 30e9]"));
  EXPECT_EQ(Figure(c, "health")["values"], Json::parse("[70.0, 93.0]"));
  // An epoch: its last node's time, the energy of every node.
  ASSERT_EQ(c["epochs"].size(), 2u);
  EXPECT_EQ(c["epochs"][0]["duration_s"], Json::parse("[50.0, 40.0]"));
  EXPECT_EQ(c["epochs"][0]["energy_kwh"], Json::parse("[0.1, 0.08]"));
  // A job of one node is that node's run.
  std::vector<ComparedRun> one = {{"a", {job41[1]}, 1010.0, ""},
                                  {"job 41", {job41[1]}, 1010.0, "41"}};
  Json d = ComparisonJson(CompareRuns(one));
  for (const Json& f : d["figures"]) EXPECT_EQ(f["values"][0], f["values"][1]) << f["key"];
}

}  // namespace
}  // namespace tv::compare_test

// The leak rules and the OOM forecast on rows: a leak is found with the right
// slope, a sawtooth, a plateau and flat memory never are.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "analysis/findings/analyzer.h"
#include "analysis/findings/trend.h"

namespace tv::memory_rules_test {
namespace {

constexpr double kStart = 1700000000;
constexpr double kMiB = 1024.0 * 1024;

TEST(Trend, TheilSenIgnoresAnOutlier) {
  std::vector<double> x = {0, 1, 2, 3, 4, 5, 6};
  std::vector<double> y = {0, 2, 4, 600, 8, 10, 12};
  EXPECT_DOUBLE_EQ(TheilSenSlope(x, y), 2);
}

TEST(Trend, MannKendallOnSixRisingPointsAndOnNoise) {
  std::vector<double> rising = {1, 2, 3, 4, 5, 6};
  // S = 15, Var = 6*5*17/18: z = 14/sqrt(28.33) = 2.63, p = 0.0043.
  EXPECT_NEAR(MannKendallRiseP(rising), 0.0043, 0.0002);
  std::vector<double> flat = {5, 5, 5, 5, 5, 5, 5, 5};
  EXPECT_EQ(MannKendallRiseP(flat), 1);
  std::vector<double> saw = {1, 3, 1, 3, 1, 3, 1, 3, 1, 3};
  EXPECT_GT(MannKendallRiseP(saw), 0.1);
}

TEST(Trend, FloorsAreTheMinimumOfEachUnit) {
  FloorSeries s(3);
  EXPECT_FALSE(s.Add(0, 5, 0));
  EXPECT_FALSE(s.Add(1, 3, 0));
  EXPECT_TRUE(s.Add(2, 9, 1));
  ASSERT_EQ(s.floors().size(), 1u);
  EXPECT_EQ(s.floors()[0].value, 3);
  for (int u = 2; u < 6; ++u) s.Add(u + 1, u, u);
  EXPECT_EQ(s.floors().size(), 3u);  // the newest kept
  EXPECT_EQ(s.closed(), 5u);
}

struct MemoryRun {
  Analyzer analyzer{Thresholds(), 1};
  std::vector<Event> events;
  std::vector<MemoryRisk> risks;
  // A row at second `s` of a process whose memory is `bytes`, on a host with
  // 20 GiB available.
  void Row(double s, double bytes, double gpu_job_bytes = -1) {
    RowWithLowest(s, bytes, std::nullopt, gpu_job_bytes);
  }
  // `lowest`: the row's lowest sample, where a row carries one.
  void RowWithLowest(double s, double bytes, std::optional<double> lowest,
                     double gpu_job_bytes = -1) {
    Frame f;
    f.t = kStart + s;
    f.elapsed_s = s;
    f.job_processes = 1;
    f.job_memory_bytes = std::round(bytes);
    f.job_memory_min_bytes = lowest;
    f.host_memory_available_bytes = 20 * 1024 * kMiB - bytes;
    f.host_memory_limit_bytes = 24 * 1024 * kMiB;
    if (gpu_job_bytes >= 0) {
      GpuFrame g;
      g.busy = 0.9;
      g.memory_total_bytes = 8e9;
      g.memory_used_bytes = gpu_job_bytes + 5e8;
      g.job_memory_bytes = gpu_job_bytes;
      f.gpus.push_back(g);
    }
    analyzer.OnFrame(f, &events);
    for (MemoryRisk& r : analyzer.TakeRisks()) risks.push_back(r);
  }
  // A row of a job whose PSS is `pss` and its anonymous part `anon`.
  void RowWithAnon(double s, double pss, double anon) {
    Frame f;
    f.t = kStart + s;
    f.elapsed_s = s;
    f.job_processes = 1;
    f.job_memory_bytes = f.job_memory_min_bytes = pss;
    f.job_memory_anon_pss_bytes = f.job_memory_anon_pss_min_bytes = anon;
    f.host_memory_available_bytes = 20 * 1024 * kMiB - pss;
    f.host_memory_limit_bytes = 24 * 1024 * kMiB;
    analyzer.OnFrame(f, &events);
  }
  void Epoch(double s, int64_t epoch, int64_t planned) {
    if (epoch == 0) analyzer.OnMark(Mark{.t = kStart + s, .pid = 7, .framework = "torch"}, &events);
    Mark m{.type = EventType::kEpochBegin, .t = kStart + s, .pid = 7, .epoch = epoch};
    m.planned_epochs = planned;
    m.call = 1;
    analyzer.OnMark(m, &events);
  }
  const Event* Opened(std::string_view id) const {
    for (const Event& e : events) {
      if (e.type == EventType::kFindingOpen && e.fields["id"] == id) return &e;
    }
    return nullptr;
  }
  bool AnyOpened() const {
    for (const Event& e : events) {
      if (e.type == EventType::kFindingOpen) return true;
    }
    return false;
  }
};

TEST(MemoryRules, AProcessLeaking8MBPerSecondIsFoundWithinAMinuteWithItsSlope) {
  MemoryRun run;
  double found = 0;
  for (int s = 0; s < 120 && found == 0; ++s) {
    // 8 MB/s with the allocator's jitter of a few MiB.
    run.Row(s, 300 * kMiB + 8e6 * s + ((s * 7919) % 5) * kMiB);
    if (run.Opened("host-memory-leak")) found = s;
  }
  ASSERT_GT(found, 0);
  EXPECT_LE(found, 60);
  const Event* e = run.Opened("host-memory-leak");
  double per_hour = e->fields["evidence"]["growth_bytes_per_hour"].get<double>();
  EXPECT_NEAR(per_hour / 3600, 8e6, 8e6 * 0.15);
  EXPECT_GT(e->fields["evidence"]["confidence"].get<double>(), 0.99);
  ASSERT_FALSE(run.risks.empty());
  EXPECT_EQ(run.risks[0].kind, MemoryRisk::Kind::kHostMemoryLeak);
  nlohmann::ordered_json trends = MemoryTrendsJson(run.analyzer.MemoryTrends());
  ASSERT_FALSE(trends.empty());
  EXPECT_EQ(trends[0]["verdict"], "leak");
}

TEST(MemoryRules, FlatSawtoothAndPlateauAreNoLeak) {
  MemoryRun flat, saw, plateau;
  for (int s = 0; s < 900; ++s) {
    flat.Row(s, 500 * kMiB + (s % 3) * kMiB);
    // An evaluation buffer of 400 MiB taken and given back every 20 s.
    saw.Row(s, 500 * kMiB + (s % 20 < 12 ? 400 * kMiB * (s % 20) / 12 : 0));
    // A cache filling to 600 MiB over the first half minute and then held,
    // under a batch buffer taken and given back every 4 s.
    plateau.Row(
        s, 500 * kMiB + 600 * kMiB * (1 - std::exp(-s / 10.0)) + (s % 4 == 3 ? 0 : 100 * kMiB));
  }
  EXPECT_FALSE(flat.AnyOpened());
  EXPECT_FALSE(saw.AnyOpened());
  EXPECT_FALSE(plateau.AnyOpened());
  EXPECT_EQ(MemoryTrendsJson(flat.analyzer.MemoryTrends())[0]["verdict"], "no leak");
}

TEST(MemoryRules, ATroughShorterThanARowIsAFloorThroughTheRowsLowestSample) {
  // A buffer of 300 MiB held but for a 0.3 s trough every 6 s: the row means
  // of the rows with a trough rise as the trough drifts in them (the job gave
  // its pages back for a shorter share of the row), their lowest samples do not.
  MemoryRun run, means;
  for (int s = 0; s < 300; ++s) {
    bool trough = s % 6 == 5;
    double drift = static_cast<double>(s) / 300;  // the share of the row the buffer is held
    double mean = 500 * kMiB + 300 * kMiB * (trough ? drift : 1);
    run.RowWithLowest(s, mean, trough ? 500 * kMiB : mean);
    means.Row(s, mean);
  }
  EXPECT_FALSE(run.AnyOpened());
  EXPECT_EQ(MemoryTrendsJson(run.analyzer.MemoryTrends())[0]["verdict"], "no leak");
  // Judged on the means alone, the same memory would be a leak.
  EXPECT_TRUE(means.Opened("host-memory-leak"));
}

// A healthy job beside three others that map the same libraries: as each of
// them exits, its share of those file pages moves to the job (PSS 158 -> 178
// -> 184 -> 237 MiB, as measured), while what the job allocated stays put.
TEST(MemoryRules, PagesOfLibrariesLeftByOtherProcessesAreNoLeakOfTheJob) {
  MemoryRun run;
  for (int s = 0; s < 120; ++s) {
    double pss = (s < 50 ? 158 : s < 70 ? 178 : s < 90 ? 184 : 237) * kMiB;
    run.RowWithAnon(s, pss, 121 * kMiB + (s % 3) * kMiB);
  }
  EXPECT_FALSE(run.AnyOpened());
  nlohmann::ordered_json trends = MemoryTrendsJson(run.analyzer.MemoryTrends());
  EXPECT_EQ(trends[0]["figure"], "job.memory_anon_pss_bytes");
  EXPECT_EQ(trends[0]["verdict"], "no leak");
  // Judged on its PSS, the same job would be a leak.
  MemoryRun pss_only;
  for (int s = 0; s < 120; ++s) {
    pss_only.Row(s, (s < 50 ? 158 : s < 70 ? 178 : s < 90 ? 184 : 237) * kMiB);
  }
  EXPECT_TRUE(pss_only.Opened("host-memory-leak"));
}

TEST(MemoryRules, AnAnonymousLeakIsFoundWithItsRateAndWords) {
  MemoryRun run;
  for (int s = 0; s < 90; ++s) run.RowWithAnon(s, 400 * kMiB + 8e6 * s, 250 * kMiB + 8e6 * s);
  const Event* e = run.Opened("host-memory-leak");
  ASSERT_NE(e, nullptr);
  EXPECT_NEAR(e->fields["evidence"]["growth_bytes_per_hour"].get<double>() / 3600, 8e6, 8e5);
  EXPECT_NE(e->fields["message"].get<std::string>().find("allocated memory"), std::string::npos);
  EXPECT_EQ(MemoryTrendsJson(run.analyzer.MemoryTrends())[0]["figure"],
            "job.memory_anon_pss_bytes");
}

TEST(MemoryRules, AShortRunHasNotEnoughEvidenceYet) {
  MemoryRun run;
  for (int s = 0; s < 45; ++s) run.Row(s, 300 * kMiB + 8e6 * s);
  EXPECT_FALSE(run.AnyOpened());
  EXPECT_EQ(MemoryTrendsJson(run.analyzer.MemoryTrends())[0]["verdict"], "not enough evidence yet");
}

TEST(MemoryRules, AGpuLeakWithPlannedEpochsForecastsTheEpochItRunsOutIn) {
  // Epochs of 10 s, 50 planned; the job's GPU memory grows 40 MB/s from 1 GB
  // on an 8 GB GPU with 0.5 GB used by others: it is full at second 162.5,
  // in epoch 17 (seconds 160..170).
  MemoryRun run;
  for (int s = 0; s < 120; ++s) {
    if (s % 10 == 0) run.Epoch(s, s / 10, 50);
    run.Row(s, 400 * kMiB, 1e9 + 40e6 * s);
  }
  const Event* leak = run.Opened("gpu-memory-leak");
  ASSERT_NE(leak, nullptr);
  EXPECT_NEAR(leak->fields["evidence"]["growth_bytes_per_epoch"].get<double>(), 400e6, 4e6);
  const Event* fc = run.Opened("oom-forecast");
  ASSERT_NE(fc, nullptr);
  EXPECT_EQ(fc->fields["severity"], "critical");
  EXPECT_EQ(fc->fields["evidence"]["planned_epochs"], 50);
  EXPECT_NEAR(fc->fields["evidence"]["oom_epoch"].get<double>(), 17, 1);
  double at = fc->t - kStart;
  EXPECT_NEAR(at + fc->fields["evidence"]["seconds_left"].get<double>(), 162.5, 162.5 * 0.05);
  EXPECT_NE(fc->fields["message"].get<std::string>().find("of 50"), std::string::npos);
  bool forecast_risk = false;
  for (const MemoryRisk& r : run.risks) {
    if (r.kind == MemoryRisk::Kind::kOomForecast && r.gpu == 0 && r.epoch) forecast_risk = true;
  }
  EXPECT_TRUE(forecast_risk);
  EXPECT_EQ(run.Opened("host-memory-leak"), nullptr);
}

TEST(MemoryRules, ALeakThatEndsAfterThePlannedRunIsNoForecast) {
  // The same leak, 10 planned epochs: the run ends at second 100, before the
  // memory runs out at 162.
  MemoryRun run;
  for (int s = 0; s < 100; ++s) {
    if (s % 10 == 0) run.Epoch(s, s / 10, 10);
    run.Row(s, 400 * kMiB, 1e9 + 40e6 * s);
  }
  EXPECT_NE(run.Opened("gpu-memory-leak"), nullptr);
  EXPECT_EQ(run.Opened("oom-forecast"), nullptr);
}

TEST(MemoryRules, TheRankThatLeaksIsNamed) {
  Analyzer analyzer{Thresholds(), 1};
  std::vector<Event> events;
  for (int s = 0; s < 90; ++s) {
    Frame f;
    f.t = kStart + s;
    f.elapsed_s = s;
    f.job_processes = 2;
    f.job_memory_bytes = 800 * kMiB + 4e6 * s;
    f.ranks.push_back(RankFrame{0, 100, 10.0 * s, std::nullopt, 400 * kMiB});
    f.ranks.push_back(RankFrame{1, 101, 10.0 * s, std::nullopt, 400 * kMiB + 4e6 * s});
    analyzer.OnFrame(f, &events);
  }
  std::vector<nlohmann::json> subjects;
  for (const Event& e : events) {
    if (e.type == EventType::kFindingOpen && e.fields["id"] == "host-memory-leak") {
      subjects.push_back(e.fields["subject"]);
    }
  }
  ASSERT_EQ(subjects.size(), 2u);  // the job, and rank 1 in it
  EXPECT_NE(std::find(subjects.begin(), subjects.end(), nlohmann::json{{"rank", 1}, {"pid", 101}}),
            subjects.end());
  nlohmann::ordered_json trends = MemoryTrendsJson(analyzer.MemoryTrends());
  int leaks = 0;
  for (const auto& t : trends) leaks += t["verdict"] == "leak";
  EXPECT_EQ(leaks, 2);
}

// Two ranks of a job on a node where another job's processes, which map the
// same libraries, exit: each rank's PSS steps up; what it allocated does not,
// but for rank 1's leak.
TEST(MemoryRules, RanksAreJudgedOnTheirAnonymousPartWhereRowsHaveIt) {
  Analyzer analyzer{Thresholds(), 1};
  std::vector<Event> events;
  for (int s = 0; s < 90; ++s) {
    double libraries = (s < 45 ? 30 : s < 60 ? 45 : 90) * kMiB;
    Frame f;
    f.t = kStart + s;
    f.elapsed_s = s;
    f.job_processes = 2;
    f.job_memory_bytes = 800 * kMiB + 2 * libraries + 4e6 * s;
    f.job_memory_anon_pss_bytes = 800 * kMiB + 4e6 * s;
    RankFrame steady{0, 100, 10.0 * s, std::nullopt, 400 * kMiB + libraries};
    steady.memory_anon_pss_bytes = 400 * kMiB;
    RankFrame leaking{1, 101, 10.0 * s, std::nullopt, 400 * kMiB + libraries + 4e6 * s};
    leaking.memory_anon_pss_bytes = 400 * kMiB + 4e6 * s;
    f.ranks = {steady, leaking};
    analyzer.OnFrame(f, &events);
  }
  std::vector<nlohmann::json> subjects;
  for (const Event& e : events) {
    if (e.type == EventType::kFindingOpen && e.fields["id"] == "host-memory-leak") {
      subjects.push_back(e.fields["subject"]);
      if (e.fields["subject"].contains("rank")) {
        EXPECT_NE(e.fields["message"].get<std::string>().find("allocated memory of rank 1"),
                  std::string::npos);
      }
    }
  }
  EXPECT_EQ(subjects,
            (std::vector<nlohmann::json>{{{"memory", "job"}}, {{"rank", 1}, {"pid", 101}}}));
  nlohmann::ordered_json trends = MemoryTrendsJson(analyzer.MemoryTrends());
  ASSERT_EQ(trends.size(), 3u);
  EXPECT_EQ(trends[1]["figure"], "training.ranks[].memory_anon_pss_bytes");
  EXPECT_EQ(trends[1]["verdict"], "no leak");
  EXPECT_EQ(trends[2]["verdict"], "leak");
}

TEST(MemoryRules, ReservedGrowingWhileAllocatedDoesNotIsAllocatorGrowth) {
  Analyzer analyzer{Thresholds(), 1};
  std::vector<Event> events;
  for (int s = 0; s < 200; ++s) {
    Frame f;
    f.t = kStart + s;
    f.elapsed_s = s;
    f.job_processes = 1;
    GpuFrame g;
    g.memory_total_bytes = 80e9;
    g.memory_used_bytes = 2e9 + 5e6 * s;
    g.job_memory_bytes = 2e9 + 5e6 * s;
    g.allocator_allocated_bytes = 1e9 + (s % 4) * 1e6;
    g.allocator_reserved_bytes = 1.5e9 + 5e6 * s;
    f.gpus.push_back(g);
    analyzer.OnFrame(f, &events);
  }
  std::vector<std::string> opened;
  for (const Event& e : events) {
    if (e.type == EventType::kFindingOpen) opened.push_back(e.fields["id"]);
  }
  EXPECT_EQ(opened, std::vector<std::string>{"allocator-growth"});
}

}  // namespace
}  // namespace tv::memory_rules_test

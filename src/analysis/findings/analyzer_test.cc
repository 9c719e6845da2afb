#include "analysis/findings/analyzer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/aggregator.h"
#include "sinks/row_json.h"

namespace tv::analyzer_test {
namespace {

constexpr double kStart = 1700000000;

// Short windows so a test judges in minutes of fake time.
Thresholds Short() {
  Thresholds th;
  for (auto [key, value] : {std::pair{"warmup_s", 5.0},
                            {"window_s", 10.0},
                            {"open_s", 5.0},
                            {"hold_s", 10.0},
                            {"low_gpu_util_window_s", 20.0}}) {
    EXPECT_EQ(th.Set(key, value), "");
  }
  return th;
}

// A healthy row at second `s`: one GPU the job uses, busy 90 %, stepping 10/s.
Frame Healthy(double s) {
  Frame f;
  f.t = kStart + s;
  f.elapsed_s = s;
  f.job_processes = 3;
  f.job_cpu_util_ratio = 0.4;
  f.job_memory_util_ratio = 0.3;
  f.host_swap_used_bytes = 0;
  f.host_cpu_iowait_ratio = 0.01;
  f.steps = 10 * s;
  f.data_wait_ratio = 0.02;
  GpuFrame g;
  g.busy = 0.9;
  g.memory_used_max_bytes = 40e9;
  g.memory_total_bytes = 80e9;
  g.job_memory_bytes = 39e9;
  g.job_processes = 1;
  g.other_processes = 0;
  g.other_memory_bytes = 0;
  g.throttle_any_ratio = 0;
  f.gpus.push_back(g);
  return f;
}

struct Judged {
  Analyzer analyzer;
  std::vector<Event> events;
  explicit Judged(Thresholds th = Short()) : analyzer(th, 1) {}
  // Feeds rows from second `from` to `to` (exclusive), each changed by `change`.
  template <typename Change>
  void Rows(int from, int to, Change&& change) {
    for (int s = from; s < to; ++s) {
      Frame f = Healthy(s);
      change(f);
      analyzer.OnFrame(f, &events);
    }
  }
  void Rows(int from, int to) {
    Rows(from, to, [](Frame&) {});
  }
  std::vector<std::string> Opened() const {
    std::vector<std::string> ids;
    for (const Event& e : events) {
      if (e.type == EventType::kFindingOpen) ids.push_back(e.fields["id"].get<std::string>());
    }
    return ids;
  }
  const Event* First(const std::string& type) const {
    for (const Event& e : events) {
      if (EventTypeName(e.type) == type) return &e;
    }
    return nullptr;
  }
};

using Ids = std::vector<std::string>;

TEST(Findings, HealthyRunHasNoneAndScoresItsGpuBusyShare) {
  Judged run;
  run.Rows(0, 600);
  run.analyzer.Finish(kStart + 600, &run.events);
  EXPECT_EQ(run.Opened(), Ids{});
  nlohmann::ordered_json h = HealthJson(run.analyzer.Health());
  EXPECT_EQ(h["score"], 96);  // 100 - 10 % idle GPU x 40 points
  ASSERT_EQ(h["breakdown"].size(), 1u);
  EXPECT_EQ(h["breakdown"][0]["points"], -4);
}

TEST(Findings, InputBoundOpensAfterWindowAndOpenTimeWithTheMeasuredShare) {
  Judged run;
  run.Rows(0, 60, [](Frame& f) { f.data_wait_ratio = 0.35; });
  ASSERT_EQ(run.Opened(), Ids{"input-bound"});
  const Event* e = run.First("finding_open");
  EXPECT_EQ(e->fields["severity"], "warning");
  EXPECT_DOUBLE_EQ(e->fields["evidence"]["data_wait_ratio"].get<double>(), 0.35);
  // A full 10 s window from the row after the first step's (1 s), then 5 s held.
  EXPECT_GE(e->t - kStart, 1 + 8 + 5);
  EXPECT_LE(e->t - kStart, 1 + 10 + 5 + 2);
}

// A Keras job whose wait nothing measures (no data_wait_ratio), using `cores`
// of the `allowed` it may use.
Judged Unmeasured(double cores, double allowed = 2) {
  Judged run;
  run.analyzer.OnMark(Mark{EventType::kClientStart, kStart, 42, -1, {}, "", "keras"}, &run.events);
  run.Rows(0, 40, [cores, allowed](Frame& f) {
    f.data_wait_ratio.reset();
    f.job_cpu_cores = cores;
    f.job_cpu_util_ratio = cores / allowed;
    f.gpus.clear();
  });
  return run;
}

ProfileCapture Traced(double loader_share) {
  ProfileCapture p{"input-bound", "", "profiles/input-bound-0-90", 20, 1.0, "", {}};
  p.figures.steps = 20;
  p.figures.step_s = 0.05;
  p.figures.data_loader_share = loader_share;
  p.figures.top_ops = {{"MatMul", 0.02}};
  return p;
}

TEST(Findings, AWaitNothingMeasuresIsProfiledWhenNoComputeIsBusyAndTheTraceJudgesIt) {
  Judged idle = Unmeasured(0.6);
  // Asked, and asked again a window later while no profile came (the budget
  // may have had no room for it yet).
  std::vector<FindingId> asked = idle.analyzer.TakeProbes();
  EXPECT_GE(asked.size(), 2u);
  EXPECT_EQ(std::count(asked.begin(), asked.end(), FindingId::kInputBound),
            static_cast<long>(asked.size()));
  idle.Rows(40, 60, [](Frame& f) {
    f.data_wait_ratio.reset();
    f.gpus.clear();
  });
  idle.analyzer.TakeProbes();
  EXPECT_EQ(idle.Opened(), Ids{});
  Mark traced{EventType::kProfile, kStart + 61, 42, -1};
  traced.profile = Traced(0.62);
  idle.analyzer.OnMark(traced, &idle.events);
  ASSERT_EQ(idle.Opened(), Ids{"input-bound"});
  const Event* e = idle.First("finding_open");
  EXPECT_EQ(e->fields["severity"], "warning");
  EXPECT_DOUBLE_EQ(e->fields["evidence"]["data_wait_ratio"].get<double>(), 0.62);
  EXPECT_EQ(e->fields["evidence"]["profile"], "profiles/input-bound-0-90");
  EXPECT_NE(e->fields["message"].get<std::string>().find("A profile of 20 steps"),
            std::string::npos);
  // Nothing measures the wait after it: it stays open, and no profile is asked again.
  idle.Rows(62, 120, [](Frame& f) {
    f.data_wait_ratio.reset();
    f.gpus.clear();
  });
  EXPECT_EQ(idle.First("finding_close"), nullptr);
  EXPECT_TRUE(idle.analyzer.TakeProbes().empty());

  Judged fed = Unmeasured(0.6);  // a trace with little wait: nothing to find
  traced.profile = Traced(0.04);
  fed.analyzer.OnMark(traced, &fed.events);
  EXPECT_EQ(fed.Opened(), Ids{});
  Judged busy = Unmeasured(1.9);  // the CPU is busy: no profile asked
  EXPECT_TRUE(busy.analyzer.TakeProbes().empty());
  Judged looping = Unmeasured(1.0, 16);  // one thread busy of 16 cores: busy too
  EXPECT_TRUE(looping.analyzer.TakeProbes().empty());
  Judged measured;  // the wait is measured: no profile asked, a trace opens nothing
  measured.analyzer.OnMark(Mark{EventType::kClientStart, kStart, 42, -1, {}, "", "keras"},
                           &measured.events);
  measured.Rows(0, 40, [](Frame& f) { f.gpus.clear(); });
  EXPECT_TRUE(measured.analyzer.TakeProbes().empty());
  traced.profile = Traced(0.62);
  measured.analyzer.OnMark(traced, &measured.events);
  EXPECT_EQ(measured.Opened(), Ids{});
}

TEST(Findings, AStepRateThatHalvesIsAThroughputDropUntilItComesBack) {
  Judged run;
  // 10 steps/s for 2 min, 5 steps/s for 1 min, then 10 steps/s again.
  auto steps = [](int s) {
    return s < 120 ? 10.0 * s : s < 180 ? 1200 + 5.0 * (s - 120) : 1500 + 10.0 * (s - 180);
  };
  run.Rows(0, 240, [&](Frame& f) { f.steps = steps(static_cast<int>(f.elapsed_s)); });
  ASSERT_EQ(run.Opened(), Ids{"throughput-drop"});
  const Event* e = run.First("finding_open");
  EXPECT_EQ(e->fields["severity"], "warning");
  EXPECT_DOUBLE_EQ(e->fields["evidence"]["steps_per_second"].get<double>(), 5);
  EXPECT_DOUBLE_EQ(e->fields["evidence"]["best_steps_per_second"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(e->fields["evidence"]["ratio"].get<double>(), 0.5);
  // The window's median crosses once half of it is slow, then open_s held.
  EXPECT_GE(e->t - kStart, 120 + 5 + 5);
  EXPECT_LE(e->t - kStart, 120 + 10 + 5 + 2);
  const Event* closed = run.First("finding_close");
  ASSERT_NE(closed, nullptr);
  EXPECT_GT(closed->t - kStart, 180);
}

TEST(Findings, JitterPausesAndAStopAreNoThroughputDrop) {
  Judged jitter;  // steps of +-40 %, a 3 s pause (a checkpoint) every 30 s
  double total = 0;
  jitter.Rows(0, 300, [&](Frame& f) {
    int s = static_cast<int>(f.elapsed_s);
    bool paused = s % 30 < 3 && s > 30;
    total += paused ? 0 : 10 * (1 + 0.4 * ((s * 7919) % 3 - 1));
    f.steps = total;
  });
  EXPECT_EQ(jitter.Opened(), Ids{});
  Judged stopped;  // stepping stops: stalled's, not a slower rate
  stopped.Rows(0, 200, [](Frame& f) { f.steps = std::min(f.elapsed_s, 100.0) * 10; });
  for (const std::string& id : stopped.Opened()) EXPECT_NE(id, "throughput-drop");
}

TEST(Findings, ModerateWaitIsInfoAndSmallWaitIsNothing) {
  Judged moderate;
  moderate.Rows(0, 60, [](Frame& f) { f.data_wait_ratio = 0.12; });
  ASSERT_EQ(moderate.Opened(), Ids{"input-bound"});
  EXPECT_EQ(moderate.First("finding_open")->fields["severity"], "info");
  Judged small;
  small.Rows(0, 300, [](Frame& f) { f.data_wait_ratio = 0.07; });
  EXPECT_EQ(small.Opened(), Ids{});
}

TEST(Findings, ABriefDipDoesNotCloseAFindingButAClearSpellDoes) {
  Judged run;
  run.Rows(0, 60, [](Frame& f) { f.data_wait_ratio = 0.5; });
  run.Rows(60, 65, [](Frame& f) { f.data_wait_ratio = 0; });  // mean stays above
  run.Rows(65, 80, [](Frame& f) { f.data_wait_ratio = 0.5; });
  EXPECT_EQ(run.First("finding_close"), nullptr);
  run.Rows(80, 120, [](Frame& f) { f.data_wait_ratio = 0; });
  ASSERT_NE(run.First("finding_close"), nullptr);
  EXPECT_EQ(run.Opened(), Ids{"input-bound"});  // opened once, never flapped
}

TEST(Findings, EvaluationIsNotIdleTraining) {
  Judged run;
  run.Rows(0, 30);
  run.Rows(30, 400, [](Frame& f) {
    f.phase = "eval";
    f.gpus[0].busy = 0;
    f.steps = 300;
  });
  EXPECT_EQ(run.Opened(), Ids{});
}

TEST(Findings, StalledWhenStepsStopWhileTheProcessLives) {
  Judged run;
  Mark hello{EventType::kClientStart, kStart, 42, -1, {}, "", "torch"};
  run.analyzer.OnMark(hello, &run.events);
  run.Rows(0, 30);
  run.Rows(30, 200, [](Frame& f) { f.steps = 300; });
  ASSERT_EQ(run.Opened(), Ids{"stalled"});
  const Event* e = run.First("finding_open");
  EXPECT_EQ(e->fields["severity"], "critical");
  EXPECT_NEAR(e->t - kStart, 30 + 60, 2);  // 60 s: longer than 20 x 0.1 s steps
  // One process: the command that shows where it waits, with its pid.
  EXPECT_NE(e->fields["advice"][0].get<std::string>().find("py-spy dump --pid 42"),
            std::string::npos);
  EXPECT_EQ(e->fields["advice"][0].get<std::string>().find("NCCL"), std::string::npos);
}

TEST(Findings, NoStallOnceTheProcessSaidGoodbye) {
  Judged run;
  run.analyzer.OnMark(Mark{EventType::kClientStart, kStart, 42, -1, {}, "", "torch"}, &run.events);
  run.Rows(0, 30);
  run.analyzer.OnMark(Mark{EventType::kClientEnd, kStart + 30, 42, -1, {}, "", ""}, &run.events);
  run.Rows(30, 200, [](Frame& f) { f.steps = 300; });
  EXPECT_EQ(run.Opened(), Ids{});
}

TEST(Findings, StragglerIsTheRankThatStepsSlower) {
  Judged run;
  run.Rows(0, 60, [](Frame& f) {
    f.ranks = {{0, 100, f.elapsed_s * 10}, {1, 101, f.elapsed_s * 4}};
  });
  ASSERT_EQ(run.Opened(), Ids{"straggler"});
  EXPECT_EQ(run.First("finding_open")->fields["subject"]["rank"], 1);
  EXPECT_NEAR(run.First("finding_open")->fields["evidence"]["score"].get<double>(), 0.4, 0.01);
}

TEST(Findings, StragglerAmongSynchronisedRanksIsTheOneThatWaitsForItsData) {
  Judged run;
  run.Rows(0, 60, [](Frame& f) {
    f.data_wait_ratio = std::nullopt;  // the job's mean left out: only the ranks judge
    f.ranks = {{0, 100, f.elapsed_s * 5, 0.04},
               {1, 101, f.elapsed_s * 5, 0.55},
               {2, 102, f.elapsed_s * 5, 0.06}};
  });
  ASSERT_EQ(run.Opened(), Ids{"straggler"});
  const Event* e = run.First("finding_open");
  EXPECT_EQ(e->fields["subject"]["rank"], 1);
  EXPECT_DOUBLE_EQ(e->fields["evidence"]["data_wait_ratio"].get<double>(), 0.55);
  EXPECT_DOUBLE_EQ(e->fields["evidence"]["others_data_wait_ratio"].get<double>(), 0.06);
  Judged even;  // all wait alike: input-bound maybe, never a straggler
  even.Rows(0, 120, [](Frame& f) {
    f.data_wait_ratio = std::nullopt;
    f.ranks = {{0, 100, f.elapsed_s * 5, 0.30}, {1, 101, f.elapsed_s * 5, 0.34}};
  });
  EXPECT_EQ(even.Opened(), Ids{});
}

TEST(Findings, HostRulesMemorySwapAndIowait) {
  Judged memory;
  memory.Rows(0, 30, [](Frame& f) { f.job_memory_util_ratio = 0.97; });
  ASSERT_EQ(memory.Opened(), Ids{"host-memory-pressure"});
  EXPECT_EQ(memory.First("finding_open")->fields["severity"], "critical");
  Judged swap;
  swap.Rows(0, 40, [](Frame& f) { f.host_swap_used_bytes = f.elapsed_s * 64e6; });
  EXPECT_EQ(swap.Opened(), Ids{"swapping"});
  Judged io;
  io.Rows(0, 40, [](Frame& f) {
    f.host_cpu_iowait_ratio = 0.7;
    f.gpus[0].busy = 0.03;
  });
  EXPECT_EQ(io.Opened(), (Ids{"io-bound", "low-gpu-util"}));
}

TEST(Findings, BatchTooSmallOnlyWhenEverythingHasRoomAndNothingElseExplainsIt) {
  auto roomy = [](Frame& f) {
    f.gpus[0].busy = 0.45;
    f.gpus[0].memory_used_max_bytes = 8e9;
  };
  Judged run;
  run.Rows(0, 60, roomy);
  EXPECT_EQ(run.Opened(), Ids{"batch-too-small"});
  Judged waiting;  // the input explains the room: input-bound, not batch size
  waiting.Rows(0, 60, [&](Frame& f) {
    roomy(f);
    f.data_wait_ratio = 0.3;
  });
  EXPECT_EQ(waiting.Opened(), Ids{"input-bound"});
}

TEST(Findings, EvalHeavyIsJudgedPerEpochFromThePhases) {
  Judged run;
  auto mark = [&](EventType type, double s, std::optional<int64_t> epoch,
                  const std::string& phase) {
    run.analyzer.OnMark(Mark{type, kStart + s, 7, -1, epoch, phase, ""}, &run.events);
  };
  mark(EventType::kClientStart, 0, {}, "");
  mark(EventType::kEpochBegin, 1, 0, "");
  mark(EventType::kPhaseBegin, 5, {}, "eval");
  mark(EventType::kPhaseEnd, 9, {}, "eval");
  mark(EventType::kEpochEnd, 10, 0, "");  // 4 s of 9 s
  ASSERT_EQ(run.Opened(), Ids{"eval-heavy"});
  EXPECT_NEAR(run.First("finding_open")->fields["evidence"]["eval_share"].get<double>(), 4.0 / 9,
              1e-3);
  mark(EventType::kEpochBegin, 10, 1, "");
  mark(EventType::kEpochEnd, 19, 1, "");  // no evaluation
  EXPECT_NE(run.First("finding_close"), nullptr);
}

TEST(Findings, HealthBreakdownAddsUpToTheScore) {
  Judged run;
  run.Rows(0, 100, [](Frame& f) {
    f.data_wait_ratio = 0.4;
    f.gpus[0].busy = 0.5;
  });
  run.analyzer.Finish(kStart + 100, &run.events);
  nlohmann::ordered_json h = HealthJson(run.analyzer.Health());
  int sum = 100;
  for (const auto& item : h["breakdown"]) sum += item["points"].get<int>();
  EXPECT_EQ(h["score"].get<int>(), sum);
  EXPECT_LT(sum, 80);
  EXPECT_EQ(FindingsJson(run.analyzer.Findings())[0]["id"], "input-bound");
}

TEST(Findings, ShortRunIsNotJudged) {
  Judged run;
  run.Rows(0, 4);
  EXPECT_FALSE(run.analyzer.HealthScore(run.analyzer.LiveTimeSpent()));
  EXPECT_FALSE(run.analyzer.Health().note.empty());
}

TEST(Findings, FrameOfALiveRowEqualsTheFrameOfItsLine) {
  Aggregator agg;
  Sample s;
  s.job.cpu_util_ratio = 0.123456789;
  s.job.memory_util_ratio = 0.5;
  s.job.processes = 4;
  s.job.memory_bytes = 7e8;
  s.training.steps = 1234;
  s.training.data_wait_ratio = 0.333333333;
  s.training.phase = "train";
  GpuSample g;
  g.index = 2;
  g.util_ratio = 0.87654321;
  g.memory_used_bytes = 1.5e9 + 0.4;
  g.memory_total_bytes = 8e10;
  g.job_memory_bytes = 1e9;
  s.gpus.push_back(g);
  agg.Add(s);
  g.memory_used_bytes = 2.5e9 + 0.6;
  g.job_memory_bytes = 2e9;
  s.gpus[0] = g;
  s.job.memory_bytes = 9e8;
  agg.Add(s);
  Row row = agg.Take(kStart + 0.12345, 1.00049);
  Frame live, replayed;
  FrameFromRow(row, &live);
  std::string line;
  AppendRowJson(row, &line);
  FrameReader reader;
  ASSERT_EQ(reader.Read(line, &replayed), FrameReader::Line::kRow);
  EXPECT_EQ(live.t, replayed.t);
  EXPECT_EQ(live.elapsed_s, replayed.elapsed_s);
  EXPECT_EQ(live.job_cpu_util_ratio, replayed.job_cpu_util_ratio);
  EXPECT_EQ(live.data_wait_ratio, replayed.data_wait_ratio);
  EXPECT_EQ(live.steps, replayed.steps);
  EXPECT_EQ(live.phase, replayed.phase);
  ASSERT_EQ(replayed.gpus.size(), 1u);
  EXPECT_EQ(live.gpus[0].index, 2);
  EXPECT_EQ(live.gpus[0].busy, replayed.gpus[0].busy);
  EXPECT_EQ(live.gpus[0].memory_used_max_bytes, replayed.gpus[0].memory_used_max_bytes);
  EXPECT_EQ(live.gpus[0].job_memory_bytes, replayed.gpus[0].job_memory_bytes);
  // The lowest samples, which the leak rules floor.
  EXPECT_EQ(live.job_memory_min_bytes, 7e8);
  EXPECT_EQ(replayed.job_memory_min_bytes, 7e8);
  EXPECT_EQ(live.job_memory_bytes, 8e8);
  EXPECT_EQ(live.gpus[0].job_memory_min_bytes, 1e9);
  EXPECT_EQ(replayed.gpus[0].job_memory_min_bytes, 1e9);
  // A time whose digits end in 5 just under the half: "{:.3f}" writes .480, while
  // round(t * 1000) / 1000 would make it .481 (the OOM evidence once differed so).
  row.t = 1796069528.4805;
  line.clear();
  AppendRowJson(row, &line);
  FrameFromRow(row, &live);
  ASSERT_EQ(reader.Read(line, &replayed), FrameReader::Line::kRow);
  EXPECT_EQ(live.t, replayed.t);
  EXPECT_EQ(live.t, 1796069528.48);
}

TEST(Findings, FrameReaderTellsRowsFromOtherJsonAndFromGarble) {
  FrameReader reader;
  Frame f;
  EXPECT_EQ(reader.Read(R"({"type":"end"})", &f), FrameReader::Line::kNotRow);
  EXPECT_EQ(reader.Read(R"({"t":5,"host":{"swap_used_bytes":)", &f), FrameReader::Line::kNotJson);
  EXPECT_EQ(reader.Read("not json", &f), FrameReader::Line::kNotJson);
  ASSERT_EQ(reader.Read(R"({"t":5,"training":{"ranks":[{"rank":0,"pid":9,"steps":3},)"
                        R"({"rank":1,"pid":10,"steps":4}],"phase":"eval"},"gpus":[{"index":3,)"
                        R"("util_ratio":0.5,"processes":[{"pid":1}]}]})",
                        &f),
            FrameReader::Line::kRow);
  EXPECT_EQ(f.phase, "eval");
  ASSERT_EQ(f.ranks.size(), 2u);
  EXPECT_EQ(f.ranks[1].steps, 4);
  ASSERT_EQ(f.gpus.size(), 1u);
  EXPECT_EQ(f.gpus[0].index, 3);
  EXPECT_EQ(f.gpus[0].busy, 0.5);
  ASSERT_EQ(reader.Read(R"({"t":5,"training":{"steps":64,"ranks":[{"rank":1,"pid":7,"steps":64,)"
                        R"("data_wait_ratio":0.5465},{"rank":0,"pid":6,"steps":64,)"
                        R"("data_wait_ratio":0.0053}]}})",
                        &f),
            FrameReader::Line::kRow);
  ASSERT_EQ(f.ranks.size(), 2u);
  EXPECT_EQ(f.ranks[0].data_wait_ratio, 0.5465);
  EXPECT_EQ(f.ranks[1].data_wait_ratio, 0.0053);
}

TEST(Findings, FrameReaderTakesOnlyWholeNumbersThatFitAsIndexRankAndPid) {
  FrameReader reader;
  Frame f;
  ASSERT_EQ(reader.Read(R"({"t":5,"gpus":[{"index":2.2e94,"util_ratio":0.5},{"index":1.5}],)"
                        R"("training":{"ranks":[{"rank":1e300,"pid":9,"steps":3},)"
                        R"({"rank":0,"pid":-3e10,"steps":3},{"rank":2,"pid":11,"steps":4}]}})",
                        &f),
            FrameReader::Line::kRow);
  ASSERT_EQ(f.gpus.size(), 2u);
  EXPECT_EQ(f.gpus[0].index, 0);  // numbered by its place, as a row without an index
  EXPECT_EQ(f.gpus[1].index, 1);
  ASSERT_EQ(f.ranks.size(), 1u);
  EXPECT_EQ(f.ranks[0].rank, 2);
  EXPECT_EQ(f.ranks[0].pid, 11);
}

TEST(FindingThresholds, UnknownKeyIsNamedWithTheNearOne) {
  Thresholds th;
  EXPECT_EQ(th.Set("window_s", 3), "");
  EXPECT_EQ(th[Th::kWindow_s], 3);
  EXPECT_NE(th.Set("windw_s", 3).find("did you mean 'window_s'"), std::string::npos);
  EXPECT_NE(th.Set("open_s", -1).find(">= 0"), std::string::npos);
  try {
    ThresholdsFrom({{"stalled_sec", 5, "tv.toml:4"}});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind("tv.toml:4: findings: unknown threshold 'stalled_sec'", 0), 0u)
        << e.what();
  }
}

TEST(FindingThresholds, ProfileOnNamesTheFindingsThatAskForAProfile) {
  Thresholds th;
  EXPECT_TRUE(th.ProfiledOnOpening(FindingId::kInputBound));
  EXPECT_TRUE(th.ProfiledOnOpening(FindingId::kStraggler));
  EXPECT_FALSE(th.ProfiledOnOpening(FindingId::kEvalHeavy));
  EXPECT_EQ(th.SetList("profile_on", {"eval-heavy", "cpu-bound"}), "");
  EXPECT_TRUE(th.ProfiledOnOpening(FindingId::kEvalHeavy));
  EXPECT_TRUE(th.ProfiledOnOpening(FindingId::kCpuBound));
  EXPECT_FALSE(th.ProfiledOnOpening(FindingId::kInputBound));
  EXPECT_EQ(th.SetList("profile_on", {}), "");
  EXPECT_FALSE(th.ProfiledOnOpening(FindingId::kCpuBound));
  EXPECT_NE(th.SetList("profile_on", {"input-bund"}).find("did you mean 'input-bound'"),
            std::string::npos);
  EXPECT_NE(th.SetList("window_s", {"x"}).find("must be a number"), std::string::npos);
  EXPECT_NE(th.Set("profile_on", 1).find("must be a list"), std::string::npos);
  ThresholdSetting list{"profile_on", 0, "tv.toml:2", true, {"stalled", "nope"}};
  try {
    ThresholdsFrom({list});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("tv.toml:2: findings: 'profile_on': unknown finding "
                                          "'nope'",
                                          0),
              0u)
        << e.what();
  }
}

TEST(Docs, FindingsDocListsEveryFindingAsGenerated) {
  std::ifstream in(std::string(TRAINVITALS_SOURCE_DIR) + "/docs/findings.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string md = FindingsMarkdown();
  while (!md.empty() && md.back() == '\n') md.pop_back();
  EXPECT_NE(ss.str().find(md), std::string::npos) << "docs/findings.md is stale: run `make docs`";
}

}  // namespace
}  // namespace tv::analyzer_test

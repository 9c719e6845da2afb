// Where the time went and the score that stands on it, on runs with step
// markers at the default thresholds: the starved loop, the hung job, the
// healthy loop and a run too short to judge.
#include "analysis/findings/goodput.h"

#include <gtest/gtest.h>

#include "analysis/findings/analyzer.h"

namespace tv::goodput_test {
namespace {

constexpr double kStart = 1700000000;
constexpr int kPid = 42;

struct Loop {
  Analyzer analyzer;
  std::vector<Event> events;
  double steps = 0;
  std::vector<Mark> marks;  // said by the process, in time order; fed as the observer does
  size_t marks_fed = 0;
  explicit Loop(int clients = 1, Thresholds th = Thresholds()) : analyzer(th, 1) {
    for (int i = 0; i < clients; ++i) {
      Mark hello{EventType::kClientStart, kStart, kPid + i, clients > 1 ? i : -1, {}, "", "torch"};
      analyzer.OnMark(hello, &events);
    }
  }
  // Rows from second `from` to `to`: `rate` steps a second, waiting `wait`
  // of the time for data, in `phase`; no GPU.
  void Rows(int from, int to, double rate, double wait, const std::string& phase = "") {
    for (int s = from; s < to; ++s) {
      steps += rate;
      Frame f;
      f.t = kStart + s + 1;
      f.elapsed_s = s + 1;
      f.job_processes = 1;
      f.job_cpu_util_ratio = 0.3;
      f.steps = steps;
      if (phase.empty() || phase == "train") f.data_wait_ratio = wait;
      f.phase = phase;
      Feed(f.t - kMarkHold_s);
      analyzer.OnFrame(f, &events);
    }
  }
  void Say(EventType type, double at, const std::string& phase, std::optional<int64_t> epoch = {}) {
    marks.push_back({type, kStart + at, kPid, -1, epoch, phase});
  }
  void Feed(double until_t) {
    for (; marks_fed < marks.size() && marks[marks_fed].t <= until_t; ++marks_fed) {
      analyzer.OnMark(marks[marks_fed], &events);
    }
  }
  // The row at second `at` that finds the training processes gone.
  void Gone(int at) {
    Frame f;
    f.t = kStart + at;
    f.elapsed_s = at;
    f.job_processes = 0;
    f.steps = steps;
    analyzer.OnFrame(f, &events);
  }
  const Event* Opened(const std::string& id) const {
    for (const Event& e : events) {
      if (e.type == EventType::kFindingOpen && e.fields["id"] == id) return &e;
    }
    return nullptr;
  }
  nlohmann::ordered_json Finish(int at) {
    Feed(kStart + at);
    analyzer.Finish(kStart + at, &events);
    return HealthJson(analyzer.Health());
  }
};

int BreakdownSum(const nlohmann::ordered_json& health) {
  int sum = 0;
  for (const auto& item : health["breakdown"]) sum += item["points"].get<int>();
  return sum;
}

TEST(TimeLedger, WholePercentsAddUpTo100) {
  TimeLedger l;
  l.Add(Spent::kProductive, 1);
  l.Add(Spent::kStartup, 1);
  l.Add(Spent::kDataWait, 1);
  GoodputRecord g = l.Record(true);
  int sum = 0;
  for (int p : g.percent) sum += p;
  EXPECT_EQ(sum, 100);
  EXPECT_DOUBLE_EQ(g.wall_s, 3);
  EXPECT_NEAR(g.productive_ratio.value_or(0), 0.3333, 1e-4);
  EXPECT_FALSE(l.Record(false).productive_ratio);
}

TEST(Goodput, StarvedLoopIsInputBoundWithinAMinuteAndScoresAtMost10) {
  Loop run;
  run.Rows(0, 3, 0, 0);  // start-up: imports, no step
  run.Rows(3, 85, 2, 0.99);
  const Event* e = run.Opened("input-bound");
  ASSERT_NE(e, nullptr);
  double first_step_t = kStart + 4;
  EXPECT_LE(e->t - first_step_t, 60);
  EXPECT_EQ(e->fields["severity"], "warning");
  nlohmann::ordered_json h = run.Finish(85);
  const auto& g = h["goodput"];
  EXPECT_NEAR(g["ratios"]["data_wait"].get<double>(), 0.99 * 81 / 85, 0.01);
  EXPECT_NEAR(g["ratios"]["startup"].get<double>(), 4.0 / 85, 0.01);
  EXPECT_NEAR(g["productive_ratio"].get<double>(), 0.01 * 81 / 85, 0.01);
  EXPECT_LE(h["score"].get<double>(), 10);
  EXPECT_EQ(100 + BreakdownSum(h), h["score"].get<int>());
  EXPECT_NE(h["breakdown"][0]["what"].get<std::string>().find("waiting for input"),
            std::string::npos);
  EXPECT_FALSE(h.contains("not_judged") &&
               h["not_judged"].dump().find("input-bound") != std::string::npos);
}

TEST(Goodput, HealthyLoopGetsNothingAndKeepsItsScore) {
  Loop run;
  run.Rows(0, 3, 0, 0);
  run.Rows(3, 85, 20, 0.02);
  nlohmann::ordered_json h = run.Finish(85);
  EXPECT_EQ(FindingsJson(run.analyzer.Findings()), nlohmann::ordered_json::array());
  EXPECT_GE(h["score"].get<double>(), 97);
  EXPECT_NEAR(h["goodput"]["productive_ratio"].get<double>(), 0.98 * 81 / 85, 0.01);
}

TEST(Goodput, TooShortARunSaysNotJudgedYetNeverHealthy) {
  Loop run;
  run.Rows(0, 2, 0, 0);
  run.Rows(2, 12, 2, 0.99);  // 10 s of steps: fewer than judge_min_s
  nlohmann::ordered_json h = run.Finish(12);
  EXPECT_EQ(run.Opened("input-bound"), nullptr);
  ASSERT_TRUE(h.contains("not_judged"));
  EXPECT_EQ(h["not_judged"][0]["id"], "input-bound");
  EXPECT_NE(h["not_judged"][0]["needs"].get<std::string>().find("20 steps"), std::string::npos);
  EXPECT_LE(h["score"].get<double>(), 30);  // the wait it had is lost time all the same
  std::vector<std::string_view> ids;
  run.analyzer.NotJudged(&ids);
  EXPECT_EQ(ids, (std::vector<std::string_view>{"input-bound", "stalled"}));
}

TEST(Goodput, HungJobIsStalledForTheTimeItHung) {
  Loop run;
  run.Rows(0, 3, 0, 0);
  run.Rows(3, 35, 10, 0.02);
  run.Rows(35, 120, 0, 0);  // hung: the process lives, no step
  const Event* e = run.Opened("stalled");
  ASSERT_NE(e, nullptr);
  std::string advice = e->fields["advice"][0].get<std::string>();
  EXPECT_NE(advice.find("py-spy dump --pid 42"), std::string::npos);
  nlohmann::ordered_json h = run.Finish(120);
  EXPECT_NEAR(h["goodput"]["ratios"]["stalled"].get<double>(), 85.0 / 120, 0.02);
  EXPECT_LE(h["score"].get<double>(), 30);
  EXPECT_EQ(100 + BreakdownSum(h), h["score"].get<int>());
}

TEST(Goodput, SeveralRanksStalledGetTheCollectiveAdvice) {
  Loop run(2);
  run.Rows(0, 3, 0, 0);
  run.Rows(3, 35, 10, 0.02);
  run.Rows(35, 120, 0, 0);
  const Event* e = run.Opened("stalled");
  ASSERT_NE(e, nullptr);
  std::string advice = e->fields["advice"][0].get<std::string>();
  EXPECT_NE(advice.find("TORCH_NCCL_ASYNC_ERROR_HANDLING"), std::string::npos);
}

TEST(Goodput, PhasesGoToTheirCategoriesAndTheSharesAddUp) {
  Loop run;
  run.Rows(0, 5, 0, 0);
  run.Rows(5, 45, 10, 0.25, "train");
  run.Rows(45, 55, 0, 0, "eval");
  run.Rows(55, 60, 0, 0, "checkpoint");
  nlohmann::ordered_json h = run.Finish(60);
  const auto& s = h["goodput"]["seconds"];
  EXPECT_NEAR(s["evaluation"].get<double>(), 10, 1e-6);
  EXPECT_NEAR(s["checkpoint"].get<double>(), 5, 1e-6);
  EXPECT_NEAR(s["data_wait"].get<double>(), 39 * 0.25, 1e-6);
  double total = 0;
  for (const auto& [k, v] : s.items()) total += v.get<double>();
  EXPECT_NEAR(total, 60, 1e-6);
  EXPECT_NEAR(h["goodput"]["wall_s"].get<double>(), 60, 1e-6);
}

TEST(Goodput, ARowIsSplitWhereThePhasesChangeInsideIt) {
  // A Keras fit with 1 s rows: one epoch from 4.4 s to 25.5 s whose two short
  // evaluations (0.2 s, 0.25 s) fall inside rows, the second at a row's end.
  Loop run;
  run.Say(EventType::kEpochBegin, 4.4, "", 0);
  run.Say(EventType::kPhaseBegin, 4.5, "train");
  run.Say(EventType::kPhaseBegin, 10.5, "eval");
  run.Say(EventType::kPhaseEnd, 10.7, "eval");
  run.Say(EventType::kPhaseBegin, 20.8, "eval");
  run.Say(EventType::kPhaseEnd, 21.05, "eval");
  run.Say(EventType::kEpochEnd, 25.5, "", 0);
  run.Say(EventType::kPhaseEnd, 25.6, "train");
  run.Rows(0, 4, 0, 0);
  run.Rows(4, 20, 10, 0, "train");
  run.Rows(20, 21, 10, 0, "eval");
  run.Rows(21, 25, 10, 0, "train");
  run.Rows(25, 30, 0, 0);
  run.Gone(31);
  nlohmann::ordered_json h = run.Finish(31);
  const auto& s = h["goodput"]["seconds"];
  EXPECT_NEAR(s["evaluation"].get<double>(), 0.45, 1e-6);
  EXPECT_NEAR(h["goodput"]["wall_s"].get<double>(), 31, 1e-6);
  // The epoch holds its own 21.1 s, its evaluations among them.
  ASSERT_EQ(h["epochs"].size(), 1u);
  const auto& epoch = h["epochs"][0]["goodput"];
  EXPECT_NEAR(epoch["wall_s"].get<double>(), 21.1, 1e-6);
  EXPECT_NEAR(epoch["seconds"]["evaluation"].get<double>(), 0.45, 1e-6);
}

TEST(Goodput, RowsWaitingForTheirMarksAreBookedWhenTheClockGoesBack) {
  Loop run;
  run.Rows(0, 5, 10, 0);  // the last row waits for the marks of its time
  Frame back;
  back.t = kStart + 2.5;  // the wall clock was set back
  back.job_processes = 1;
  back.steps = run.steps;
  run.analyzer.OnFrame(back, &run.events);
  ASSERT_TRUE(run.analyzer.Health().goodput);
  EXPECT_NEAR(run.analyzer.Health().goodput->wall_s, 5, 1e-6);
}

TEST(Goodput, TheLiveViewBooksTheNewestRowsAsTheMarksSoFarSay) {
  Loop run;
  run.Say(EventType::kPhaseBegin, 3, "train");
  run.Say(EventType::kPhaseEnd, 7.8, "train");
  run.Say(EventType::kPhaseBegin, 7.8, "eval");
  run.Rows(0, 3, 0, 0);
  run.Rows(3, 7, 10, 0, "train");
  // The row ending at 7 s waits for its marks; the gauges have it already.
  const TimeLedger& booked = run.analyzer.TimeSpent();
  TimeLedger live = run.analyzer.LiveTimeSpent();
  EXPECT_NEAR(booked.Total(), 6, 1e-6);
  EXPECT_NEAR(live.Total(), 7, 1e-6);
  EXPECT_NEAR(live[Spent::kProductive], booked[Spent::kProductive] + 1, 1e-6);
  ASSERT_TRUE(run.analyzer.HealthScore(live));
  // An evaluation begins at 7.8 s. The row ending at 8 s comes before its
  // mark is in: the live view books the row as training, and the booked
  // ledger, once the mark is in, splits it.
  double productive = booked[Spent::kProductive];
  run.Rows(7, 8, 10, 0, "eval");
  live = run.analyzer.LiveTimeSpent();
  EXPECT_NEAR(live[Spent::kProductive], productive + 2, 1e-6);
  EXPECT_NEAR(live[Spent::kEvaluation], 0, 1e-6);
  run.Rows(8, 9, 0, 0, "eval");
  live = run.analyzer.LiveTimeSpent();
  EXPECT_NEAR(booked[Spent::kProductive], productive + 1.8, 1e-6);
  EXPECT_NEAR(booked[Spent::kEvaluation], 0.2, 1e-6);
  EXPECT_NEAR(live[Spent::kProductive], productive + 1.8, 1e-6);
  EXPECT_NEAR(live[Spent::kEvaluation], 1.2, 1e-6);
  run.Finish(9);
  EXPECT_NEAR(run.analyzer.LiveTimeSpent().Total(), booked.Total(), 1e-9);
  EXPECT_NEAR(booked.Total(), 9, 1e-6);
}

TEST(Goodput, TheTeardownAfterFitIsNotProductive) {
  // A Keras job: fit() names its train phase, ends, and TensorFlow takes
  // five seconds to tear down: other phases, not productive, not stalled.
  Loop run;
  run.Rows(0, 5, 0, 0);
  run.Rows(5, 40, 10, 0, "train");
  run.Rows(40, 45, 0, 0, "");
  run.Gone(46);
  nlohmann::ordered_json h = run.Finish(46);
  const auto& s = h["goodput"]["seconds"];
  EXPECT_NEAR(s["productive"].get<double>(), 34, 1e-6);
  EXPECT_NEAR(s["other_phases"].get<double>(), 6, 1e-6);
  EXPECT_EQ(FindingsJson(run.analyzer.Findings()), nlohmann::ordered_json::array());
}

TEST(Goodput, RowsWithoutStepsBeforeTheProcessesLeaveAreTheirTeardown) {
  // A plain loop (no phases) saves its model for three seconds after its last step.
  Loop run;
  run.Rows(0, 3, 0, 0);
  run.Rows(3, 40, 10, 0);
  run.Rows(40, 43, 0, 0);
  run.Gone(44);
  nlohmann::ordered_json h = run.Finish(44);
  const auto& s = h["goodput"]["seconds"];
  EXPECT_NEAR(s["productive"].get<double>(), 36, 1e-6);
  EXPECT_NEAR(s["other_phases"].get<double>(), 4, 1e-6);
}

TEST(Goodput, TheLoadersStartIsWarmUpNotInputBound) {
  // Workers that load ahead, after a first second of waiting while they spawn:
  // the window starts after the warm-up, so only steady waits are judged.
  Thresholds th;
  for (auto [key, value] : {std::pair{"warmup_s", 2.0}, {"window_s", 4.0}, {"open_s", 1.0}}) {
    ASSERT_EQ(th.Set(key, value), "");
  }
  Loop run(1, th);
  run.Rows(0, 3, 0, 0);
  run.Rows(3, 4, 10, 0);    // the first step's row
  run.Rows(4, 5, 10, 0.9);  // the workers spawning
  run.Rows(5, 20, 20, 0.02);
  EXPECT_EQ(run.Opened("input-bound"), nullptr);
  EXPECT_EQ(FindingsJson(run.analyzer.Findings()), nlohmann::ordered_json::array());
}

}  // namespace
}  // namespace tv::goodput_test

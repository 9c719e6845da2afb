// Epoch and phase records from markers and samples: cut epochs, unmarked
// training time, the logs an epoch ended with.
#include "analysis/phases.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

namespace tv::phases_test {
namespace {

TrainingEvent Epoch(EventType type, int rank, double t, int64_t epoch, int64_t steps = 0) {
  TrainingEvent m;
  m.type = type;
  m.pid = 10 + std::max(rank, 0);
  m.rank = rank;
  m.t = t;
  m.epoch = epoch;
  if (type == EventType::kEpochEnd) m.steps = steps;
  return m;
}

// epoch_begin as a client sends it: with its process's step count so far.
TrainingEvent Begin(int rank, double t, int64_t epoch, int64_t steps_so_far) {
  TrainingEvent m = Epoch(EventType::kEpochBegin, rank, t, epoch);
  m.steps = steps_so_far;
  return m;
}

// A process's end: its bye with all its steps, or a hang-up (no count).
TrainingEvent End(int rank, double t, std::optional<int64_t> steps) {
  TrainingEvent m;
  m.type = EventType::kClientEnd;
  m.pid = 10 + std::max(rank, 0);
  m.rank = rank;
  m.t = t;
  m.steps = steps;
  return m;
}

Sample At(double t, double steps, std::vector<TrainingEvent> events = {}) {
  Sample s;
  s.t = t;
  s.mono_s = t;
  s.training.steps = steps;
  s.training.events = std::move(events);
  return s;
}

// epoch_end with the scalars its process said since the epoch began.
TrainingEvent EndWithLogs(int rank, double t, int64_t epoch,
                          std::vector<std::pair<std::string, double>> logs) {
  TrainingEvent m = Epoch(EventType::kEpochEnd, rank, t, epoch, 10);
  m.scalars = std::move(logs);
  return m;
}

TEST(PhaseTracker, EpochCutByAnExceptionEndsAtItsLastStep) {
  PhaseTracker tracker;
  std::vector<Event> events;
  // 5 s of steps at 10/s, then 7 s of traceback and worker teardown.
  for (int i = -1; i <= 120; ++i) {
    Sample s;
    s.t = 100 + i * 0.1;
    s.mono_s = s.t;
    s.training.steps = std::clamp(i, 0, 50) + 200.0;  // 200 steps before this epoch
    if (i == 0) s.training.events = {Epoch(EventType::kEpochBegin, -1, 100, 3)};
    tracker.OnSample(s, &events);
  }
  tracker.OnFinish(112, &events);
  ASSERT_EQ(events.size(), 1u);
  const auto& rec = events[0].fields;
  EXPECT_EQ(rec["complete"], false);
  EXPECT_EQ(rec["steps"], 50);
  EXPECT_DOUBLE_EQ(rec["duration_s"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(rec["steps_per_second"].get<double>(), 10.0);
  // Its time in training ends there too.
  EXPECT_DOUBLE_EQ(PhasesToJson(tracker.Phases())["train"]["duration_s"].get<double>(), 5.0);
}

TEST(PhaseTracker, AnEpochBegunAndCutBetweenTwoReadingsHasTheStepsReadWithIt) {
  // Markers without step counts (an older client; the process hung up): the
  // sampler's readings are all there is.
  PhaseTracker tracker;
  std::vector<Event> events;
  tracker.OnSample(At(1, 0, {Epoch(EventType::kEpochBegin, -1, 0.5, 0)}), &events);
  tracker.OnSample(At(2, 10), &events);
  // Epoch 1 begins after the reading of epoch 0's last step, takes 4 steps and
  // the process dies, all before the next reading.
  tracker.OnSample(At(3, 14,
                      {Epoch(EventType::kEpochEnd, -1, 2.1, 0, 10),
                       Epoch(EventType::kEpochBegin, -1, 2.2, 1), End(-1, 2.9, {})}),
                   &events);
  tracker.OnFinish(3.5, &events);
  ASSERT_EQ(events.size(), 2u);
  const auto& rec = events[1].fields;
  EXPECT_EQ(rec["epoch"], 1);
  EXPECT_EQ(rec["complete"], false);
  EXPECT_EQ(rec["steps"], 4) << rec;
  // It ends at the reading that showed its last step.
  EXPECT_DOUBLE_EQ(rec["duration_s"].get<double>(), 0.8);
}

TEST(PhaseTracker, AnEpochCutShortCountsNoneOfTheStepsBeforeItBegan) {
  // Epoch 0 takes 4 more steps after the reading of 6; epoch 1 begins at the
  // process's count of 10, takes 6 and the process is killed (no bye).
  PhaseTracker tracker;
  std::vector<Event> events;
  tracker.OnSample(At(1, 0, {Begin(-1, 0.5, 0, 0)}), &events);
  tracker.OnSample(At(2, 6), &events);
  tracker.OnSample(At(3, 13, {Epoch(EventType::kEpochEnd, -1, 2.4, 0, 10), Begin(-1, 2.5, 1, 10)}),
                   &events);
  tracker.OnSample(At(4, 16, {End(-1, 3.9, {})}), &events);
  tracker.OnFinish(4.5, &events);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].fields["complete"], false);
  EXPECT_EQ(events[1].fields["steps"], 6) << events[1].fields;
}

TEST(PhaseTracker, AnEpochCutOnTwoRanksHasTheMostEitherCountedBeforeItsBye) {
  // Uneven ranks: rank 1 took 12 steps in epoch 0, rank 0 10. In epoch 1 rank 0
  // takes 7 and rank 1 3 before both die of an exception; the job's count (the
  // most any process took) says neither.
  PhaseTracker tracker;
  std::vector<Event> events;
  tracker.OnSample(At(1, 0, {Begin(0, 0.5, 0, 0), Begin(1, 0.5, 0, 0)}), &events);
  tracker.OnSample(At(2, 8), &events);
  tracker.OnSample(
      At(3, 12,
         {Epoch(EventType::kEpochEnd, 0, 2.2, 0, 10), Epoch(EventType::kEpochEnd, 1, 2.3, 0, 12),
          Begin(1, 2.35, 1, 12), Begin(0, 2.4, 1, 10)}),
      &events);
  tracker.OnSample(At(4, 17, {End(0, 3.6, 17), End(1, 3.7, 15)}), &events);
  tracker.OnFinish(4.5, &events);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].fields["steps"], 12);
  const auto& rec = events[1].fields;
  EXPECT_EQ(rec["complete"], false);
  EXPECT_EQ(rec["steps"], 7) << rec;
}

TEST(PhaseTracker, AByeCountsOnlyForTheProcessThatBeganTheEpoch) {
  // Rank 0's process began epoch 1 at its count of 20; another process of the
  // same rank (a restart, its own count from 0) says bye at 3.
  PhaseTracker tracker;
  std::vector<Event> events;
  tracker.OnSample(At(1, 20, {Begin(0, 0.5, 1, 20)}), &events);
  TrainingEvent other = End(0, 1.5, 3);
  other.pid = 99;
  tracker.OnSample(At(2, 25, {other}), &events);
  tracker.OnFinish(2.5, &events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].fields["steps"], 5) << events[0].fields;  // the sampler's count
}

TEST(PhaseTracker, EpochTimeOutsideAnyPhaseIsTraining) {
  // Only evaluation is marked: the last second of each 10 s epoch.
  PhaseTracker tracker;
  std::vector<Event> events;
  for (int e = 0; e < 2; ++e) {
    double t0 = 10.0 * e;
    Sample s;
    s.training.events = {Epoch(EventType::kEpochBegin, -1, t0, e)};
    tracker.OnSample(s, &events);
    s.training.events.clear();
    s.training.phase_changes = {{t0 + 9, "eval", true}};
    tracker.OnSample(s, &events);
    s.training.phase_changes = {{t0 + 10, "", false}};
    s.training.events = {Epoch(EventType::kEpochEnd, -1, t0 + 10, e, 90)};
    tracker.OnSample(s, &events);
  }
  tracker.OnFinish(30, &events);  // 10 s after the last epoch: no phase, no epoch
  auto phases = PhasesToJson(tracker.Phases());
  EXPECT_DOUBLE_EQ(phases["train"]["duration_s"].get<double>(), 18.0);
  EXPECT_EQ(phases["train"]["count"], 2);
  EXPECT_DOUBLE_EQ(phases["train"]["share"].get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(phases["eval"]["duration_s"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(phases["eval"]["share"].get<double>(), 0.1);
}

TEST(PhaseTracker, ExplicitTrainPhasesAreNotCountedTwice) {
  PhaseTracker tracker;
  std::vector<Event> events;
  Sample s;
  s.training.phase_changes = {{0, "train", true}};
  s.training.events = {Epoch(EventType::kEpochBegin, -1, 0, 0)};
  tracker.OnSample(s, &events);
  s.training.phase_changes = {{4, "", false}};
  s.training.events = {Epoch(EventType::kEpochEnd, -1, 5, 0, 10)};
  tracker.OnSample(s, &events);
  tracker.OnFinish(6, &events);
  auto phases = PhasesToJson(tracker.Phases());
  EXPECT_EQ(phases["train"]["count"], 1);
  EXPECT_DOUBLE_EQ(phases["train"]["duration_s"].get<double>(), 5.0);
}

TEST(PhaseTracker, ATrainPhaseJustAfterItsEpochBeganCountsOnce) {
  PhaseTracker tracker;
  std::vector<Event> events;
  Sample s;
  for (int e = 0; e < 3; ++e) {
    double t = e * 10;
    s.training.phase_changes = {
        {t + 0.01, "train", true}, {t + 8, "eval", true}, {t + 9, "", false}};
    s.training.events = {Epoch(EventType::kEpochBegin, -1, t, e),
                         Epoch(EventType::kEpochEnd, -1, t + 9.5, e, 10)};
    tracker.OnSample(s, &events);
  }
  tracker.OnFinish(30, &events);
  auto phases = PhasesToJson(tracker.Phases());
  EXPECT_EQ(phases["train"]["count"], 3);
  EXPECT_EQ(phases["eval"]["count"], 3);
}

TEST(PhaseTracker, EpochRecordCarriesTheLowestRanksLogsOfThatEpoch) {
  PhaseTracker tracker;
  std::vector<Event> events;
  Sample s;
  s.training.events = {Epoch(EventType::kEpochBegin, 0, 0, 0),
                       Epoch(EventType::kEpochBegin, 1, 0, 0)};
  tracker.OnSample(s, &events);
  s.training.events = {EndWithLogs(1, 5, 0, {{"loss", 0.5}}),
                       EndWithLogs(0, 5.1, 0, {{"loss", 0.25}, {"accuracy", 0.9}}),
                       Epoch(EventType::kEpochBegin, 0, 5.2, 1)};
  tracker.OnSample(s, &events);
  s.training.events = {EndWithLogs(0, 10, 1, {{"loss", 0.125}})};
  tracker.OnSample(s, &events);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].fields["logs"], (nlohmann::ordered_json{{"loss", 0.25}, {"accuracy", 0.9}}));
  EXPECT_EQ(events[1].fields["logs"], (nlohmann::ordered_json{{"loss", 0.125}}));
}

TEST(PhaseTracker, EpochAndPhaseDataWaitIsTheMeanOfTheTimedSamples) {
  // Epoch 0: 10 s at 40 % data wait, then 2 s of evaluation where no process
  // times its data wait (absent): the epoch's share is its training loop's, 40 %.
  PhaseTracker tracker;
  std::vector<Event> events;
  for (int i = 0; i <= 120; ++i) {
    Sample s;
    s.t = 100 + i * 0.1;
    s.mono_s = s.t;
    if (i > 0 && i <= 100) s.training.data_wait_ratio = i % 2 == 0 ? 0.3 : 0.5;
    if (i == 0) s.training.events = {Epoch(EventType::kEpochBegin, -1, 100, 0)};
    if (i == 100) s.training.phase_changes = {{110, "eval", true}};
    if (i == 120) {
      s.training.phase_changes = {{112, "", false}};
      s.training.events = {Epoch(EventType::kEpochEnd, -1, 112, 0, 100)};
    }
    tracker.OnSample(s, &events);
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NEAR(events[0].fields["data_wait_ratio"].get<double>(), 0.4, 1e-9);
  auto phases = PhasesToJson(tracker.Phases());
  EXPECT_NEAR(phases["train"]["data_wait_ratio"].get<double>(), 0.4, 1e-9);
  EXPECT_FALSE(phases["eval"].contains("data_wait_ratio"));  // not measured: absent, not 0
}

TEST(PhaseTracker, AnEpochsDataWaitIsItsRanksOwnCountersWhereTheySaidThem) {
  // The samples say 10 % (their ticks straddle the epoch's edges); the two
  // ranks' own counters say 30 % and 50 % of their timed loops: the epoch's
  // share is their mean, 40 %.
  PhaseTracker tracker;
  std::vector<Event> events;
  auto end = [](int rank, double wait_s, double timed_s) {
    TrainingEvent m = Epoch(EventType::kEpochEnd, rank, 110, 0, 50);
    m.wait_s = wait_s;
    m.timed_s = timed_s;
    return m;
  };
  for (int i = 0; i <= 100; ++i) {
    Sample s = At(100 + i * 0.1, i);
    if (i > 0) s.training.data_wait_ratio = 0.1;
    if (i == 0) s.training.events = {Begin(0, 100, 0, 0), Begin(1, 100, 0, 0)};
    if (i == 100) s.training.events = {end(0, 3, 10), end(1, 4.9, 9.8)};
    tracker.OnSample(s, &events);
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NEAR(events[0].fields["data_wait_ratio"].get<double>(), 0.4, 1e-9);
}

TEST(PhaseTracker, NoDataWaitKeyWhenNothingTimesIt) {
  PhaseTracker tracker;
  std::vector<Event> events;
  for (int i = 0; i <= 20; ++i) {
    Sample s;
    s.t = 100 + i * 0.1;
    s.mono_s = s.t;
    s.training.steps = i;
    if (i == 0) s.training.events = {Epoch(EventType::kEpochBegin, -1, 100, 0)};
    if (i == 20) s.training.events = {Epoch(EventType::kEpochEnd, -1, 102, 0, 20)};
    tracker.OnSample(s, &events);
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].fields.contains("data_wait_ratio"));
}

TEST(PhaseTracker, APhaseWithoutStepsHasNoDataWaitFromTheTrainingBesideIt) {
  // Training at 12 % data wait, 2 s of evaluation, training again. The sample
  // whose interval holds eval's end carries the resumed loop's steps and wait.
  PhaseTracker tracker;
  std::vector<Event> events;
  double steps = 0;
  for (int i = 0; i <= 150; ++i) {
    Sample s;
    s.t = 100 + i * 0.1;
    s.mono_s = s.t;
    bool eval = i > 100 && i <= 120;  // samples of intervals inside evaluation
    if (!eval) {
      steps += 5;
      if (i > 0) s.training.data_wait_ratio = 0.12;
    }
    s.training.steps = steps;
    if (i == 0) {
      s.training.phase_changes = {{100, "train", true}};
      s.training.events = {Epoch(EventType::kEpochBegin, -1, 100, 0)};
    }
    if (i == 101) s.training.phase_changes = {{110.01, "eval", true}};
    if (i == 121) s.training.phase_changes = {{112.02, "train", false}};
    tracker.OnSample(s, &events);
  }
  tracker.OnFinish(115, &events);
  auto phases = PhasesToJson(tracker.Phases());
  EXPECT_NEAR(phases["train"]["data_wait_ratio"].get<double>(), 0.12, 1e-9);
  EXPECT_FALSE(phases["eval"].contains("data_wait_ratio")) << phases["eval"];
  EXPECT_NEAR(events.at(0).fields["data_wait_ratio"].get<double>(), 0.12, 1e-9);
}

TEST(PhaseTracker, AnyPhaseWhoseStepsAdvancedKeepsItsDataWait) {
  // A phase of the script's own naming that trains: its steps advance and its
  // loop times its data wait.
  PhaseTracker tracker;
  std::vector<Event> events;
  for (int i = 0; i <= 30; ++i) {
    Sample s;
    s.t = 100 + i * 0.1;
    s.mono_s = s.t;
    s.training.steps = i * 2.0;
    if (i > 0) s.training.data_wait_ratio = 0.3;
    if (i == 0) s.training.phase_changes = {{100, "finetune", true}};
    tracker.OnSample(s, &events);
  }
  tracker.OnFinish(103, &events);
  EXPECT_NEAR(PhasesToJson(tracker.Phases())["finetune"]["data_wait_ratio"].get<double>(), 0.3,
              1e-9);
}

TEST(PhaseTracker, AnEvalLoopThatTimesItsOwnWaitKeepsIt) {
  // Evaluation under m.data(): its own loop's wait, no training steps.
  PhaseTracker tracker;
  std::vector<Event> events;
  for (int i = 0; i <= 30; ++i) {
    Sample s;
    s.t = 100 + i * 0.1;
    s.mono_s = s.t;
    s.training.steps = 7;
    if (i > 0) s.training.data_wait_ratio = 0.2;
    if (i == 0) s.training.phase_changes = {{100, "eval", true}};
    tracker.OnSample(s, &events);
  }
  tracker.OnFinish(103, &events);
  EXPECT_NEAR(PhasesToJson(tracker.Phases())["eval"]["data_wait_ratio"].get<double>(), 0.2, 1e-9);
}

// A GPU sample with the job's SM share only where NVML's process utilization
// was read (every 5 s: one sample in 50 at 10 Hz).
GpuSample Gpu(int i) {
  GpuSample g;
  g.index = 0;
  g.util_ratio = 0.83;
  if (i % 50 == 10) g.job_sm_util_ratio = i < 300 ? 0.4 : 0.6;
  return g;
}

TEST(PhaseTracker, EveryEpochHoldsTheJobsSmShareBetweenReadings) {
  // 2.5 s epochs at 10 Hz, the job's SM share read every 5 s: half the epochs
  // hold no reading of their own.
  PhaseTracker tracker;
  std::vector<Event> events;
  for (int i = 0; i <= 400; ++i) {
    Sample s;
    s.t = 100 + i * 0.1;
    s.mono_s = s.t;
    s.gpus = {Gpu(i)};
    s.training.steps = i;
    int epoch = i / 25;
    if (i % 25 == 0 && i < 400) {
      if (i > 0) s.training.events.push_back(Epoch(EventType::kEpochEnd, -1, s.t, epoch - 1, 25));
      s.training.events.push_back(Epoch(EventType::kEpochBegin, -1, s.t, epoch));
    }
    if (i == 400) s.training.events = {Epoch(EventType::kEpochEnd, -1, s.t, 15, 25)};
    tracker.OnSample(s, &events);
  }
  ASSERT_EQ(events.size(), 16u);
  // Epoch 0 holds the first reading (1 s in) over the rest of its samples.
  for (const Event& e : events) {
    const auto& g = e.fields["gpus"].at(0);
    ASSERT_TRUE(g.contains("job_sm_util_ratio_mean")) << e.fields;
    double expected = e.fields["start_t"].get<double>() < 131 ? 0.4 : 0.6;
    if (e.fields["epoch"] == 12) continue;  // the reading changes inside it
    EXPECT_NEAR(g["job_sm_util_ratio_mean"].get<double>(), expected, 1e-9) << e.fields;
  }
}

TEST(PhaseTracker, AHeldSmShareLapsesWhenReadingsStop) {
  PhaseTracker tracker;
  std::vector<Event> events;
  for (int i = 0; i <= 400; ++i) {
    Sample s;
    s.t = 100 + i * 0.1;
    s.mono_s = s.t;
    s.gpus = {Gpu(i)};
    if (i > 20) s.gpus[0].job_sm_util_ratio.reset();  // one reading, at 101 s
    if (i == 200) s.training.events = {Epoch(EventType::kEpochBegin, -1, s.t, 0)};
    if (i == 400) s.training.events = {Epoch(EventType::kEpochEnd, -1, s.t, 0, 10)};
    tracker.OnSample(s, &events);
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].fields["gpus"].at(0).contains("job_sm_util_ratio_mean"))
      << events[0].fields;
}

}  // namespace
}  // namespace tv::phases_test

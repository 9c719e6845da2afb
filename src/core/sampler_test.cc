#include "core/sampler.h"

#include <gtest/gtest.h>

#include "core/metrics.h"

namespace tv::sampler_test {
namespace {

// A source whose job CPU value climbs by one each tick.
class CountingSource final : public Source {
 public:
  std::string_view name() const override { return "counting"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>*) override {
    out->job.cpu_cores = static_cast<double>(n_++);
    if (tick.row_tick) ++row_ticks_;
  }
  int n_ = 0;
  int row_ticks_ = 0;
};

class CollectSink final : public Sink {
 public:
  void OnRow(const Row& row) override { rows.push_back(row); }
  void OnEvent(const Event& e) override { events.push_back(e); }
  std::vector<Row> rows;
  std::vector<Event> events;
};

size_t IndexOf(std::string_view scope, std::string_view name) {
  auto m = SampleMetrics();
  for (size_t i = 0; i < m.size(); ++i) {
    if (ScopeName(m[i].scope) == scope && m[i].name == name) return i;
  }
  return SIZE_MAX;
}

TEST(Sampler, ReducesTicksIntoRowsOfMeanAndMax) {
  FakeClock clock;
  CollectSink collect;
  SinkThread sinks({&collect});
  sinks.Start();
  std::vector<std::unique_ptr<Source>> sources;
  sources.push_back(std::make_unique<CountingSource>());
  Sampler sampler({.sample_hz = 10, .interval_s = 1}, &clock, std::move(sources), &sinks);
  sampler.RunTicks(25);
  sampler.Stop();
  sinks.Close();

  ASSERT_EQ(collect.rows.size(), 3u);  // two full rows and the partial last one
  size_t cpu = IndexOf("job", "cpu_cores");
  EXPECT_DOUBLE_EQ(collect.rows[0].values[cpu]->mean, 4.5);  // 0..9
  EXPECT_DOUBLE_EQ(collect.rows[0].values[cpu]->max, 9);
  EXPECT_DOUBLE_EQ(collect.rows[1].values[cpu]->mean, 14.5);
  EXPECT_EQ(collect.rows[2].samples, 5u);
  EXPECT_DOUBLE_EQ(collect.rows[0].elapsed_s, 1.0);
  EXPECT_DOUBLE_EQ(sampler.run_row().values[cpu]->max, 24);
  EXPECT_DOUBLE_EQ(sampler.run_row().values[cpu]->mean, 12);
}

// A clock that jumps forward by a fixed step after every sleep, like a process
// that was suspended.
class JumpyClock final : public Clock {
 public:
  double MonotonicSeconds() override { return now_; }
  double WallSeconds() override { return 1e9 + now_; }
  bool SleepUntil(double deadline, StopSignal& stop) override {
    if (now_ < deadline) now_ = deadline;
    if (++sleeps_ == 3) now_ += 0.55;  // the third sleep overshoots by 5.5 periods
    return !stop.stopped();
  }
  double now_ = 0;
  int sleeps_ = 0;
};

TEST(Sampler, SkipsMissedTicksInsteadOfBunchingThem) {
  JumpyClock clock;
  SinkThread sinks({});
  std::vector<std::unique_ptr<Source>> sources;
  Sampler sampler({.sample_hz = 10, .interval_s = 1}, &clock, {}, &sinks);
  sampler.RunTicks(5);
  EXPECT_EQ(sampler.late_ticks(), 5u);
  EXPECT_EQ(sampler.ticks(), 5u);
  // The schedule stays on the grid: the next tick is due at a multiple of 0.1 s.
  EXPECT_NEAR(clock.now_, 0.9, 1e-9);  // ticks at 0, 0.1, 0.75 (as 0.7), 0.8, 0.9
}

// A clock whose `at_sleep`th sleep wakes `late_s` after its deadline, as on an
// overloaded machine.
class OversleepingClock final : public Clock {
 public:
  OversleepingClock(int at_sleep, double late_s) : at_sleep_(at_sleep), late_s_(late_s) {}
  double MonotonicSeconds() override { return now_; }
  double WallSeconds() override { return 1e9 + now_; }
  bool SleepUntil(double deadline, StopSignal& stop) override {
    if (now_ < deadline) now_ = deadline;
    if (++sleeps_ == at_sleep_) now_ += late_s_;
    return !stop.stopped();
  }

 private:
  int at_sleep_;
  double late_s_;
  double now_ = 0;
  int sleeps_ = 0;
};

// Found by the soak (make soak) on a loaded machine: when the tick that closes a
// row was among the skipped ones, that interval had no row.
TEST(Sampler, ARowWhoseClosingTickWasSkippedClosesAtTheNextTick) {
  OversleepingClock clock(9, 0.25);  // tick 8 (due 0.8 s) wakes at 1.05 s: 8 and 9 skipped
  CollectSink collect;
  SinkThread sinks({&collect});
  sinks.Start();
  Sampler sampler({.sample_hz = 10, .interval_s = 1}, &clock, {}, &sinks);
  sampler.RunTicks(19);  // ticks 0-7 and 10-20
  sampler.Stop();
  sinks.Close();

  ASSERT_EQ(collect.rows.size(), 3u);
  EXPECT_EQ(collect.rows[0].samples, 9u);  // ticks 0-7 and 10
  EXPECT_NEAR(collect.rows[0].elapsed_s, 1.1, 1e-9);
  EXPECT_EQ(collect.rows[1].samples, 9u);  // back on the grid: 11-19
  EXPECT_NEAR(collect.rows[1].elapsed_s, 2.0, 1e-9);
  EXPECT_EQ(collect.rows[2].samples, 1u);  // the partial last row
}

TEST(DeriveRatios, UsesTheTighterOfCgroupLimitAndMemTotal) {
  Sample s;
  s.host.memory_total_bytes = 8e9;
  s.host.memory_limit_bytes = 2e9;
  s.job.memory_bytes = 1e9;
  s.host.cpu_limit_cores = 2;
  s.job.cpu_cores = 1;
  DeriveRatios(&s);
  EXPECT_DOUBLE_EQ(*s.job.memory_util_ratio, 0.5);
  EXPECT_DOUBLE_EQ(*s.job.cpu_util_ratio, 0.5);
}

TEST(DeriveRatios, FallsBackToMemTotalWithoutCgroupLimit) {
  Sample s;
  s.host.memory_total_bytes = 8e9;
  s.job.memory_bytes = 2e9;
  DeriveRatios(&s);
  EXPECT_DOUBLE_EQ(*s.host.memory_limit_bytes, 8e9);
  EXPECT_DOUBLE_EQ(*s.job.memory_util_ratio, 0.25);
}

}  // namespace
}  // namespace tv::sampler_test

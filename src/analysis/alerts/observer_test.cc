#include "analysis/alerts/observer.h"

#include <gtest/gtest.h>

#include "analysis/alerts/rules_file.h"

namespace tv::observer_test {
namespace {

// A row at `t` with job.memory_bytes = `bytes`.
Row MemoryRow(double t, double bytes) {
  Row row;
  row.t = t;
  row.values.resize(SampleMetrics().size());
  row.values[metric::kJobMemoryBytes.index] = Stat{bytes, bytes, bytes, 1};
  return row;
}

class AlertsObserverTest : public testing::Test {
 protected:
  AlertsObserverTest() {
    AlertRule r;
    r.name = "job-mem-high";
    r.expr = ParseAlertExpr("job.memory_bytes > 600MiB");
    r.summary = "job memory {value} over {threshold}";
    r.actions.webhook = "http://127.0.0.1:9/";  // so that its notices are delivered
    observer_ = std::make_unique<AlertsObserver>(
        std::make_shared<const std::vector<AlertRule>>(std::vector<AlertRule>{r}), 1);
    observer_->set_notify([this](AlertNotice n) { notices_.push_back(std::move(n)); });
  }

  void Feed(double t, double mib) {
    Row row = MemoryRow(t, mib * (1 << 20));
    observer_->OnRow(&row, &events_);
  }

  std::unique_ptr<AlertsObserver> observer_;
  std::vector<Event> events_;
  std::vector<AlertNotice> notices_;
};

TEST_F(AlertsObserverTest, AResolvedAlertSaysItsValueNowNotTheFiringWords) {
  Feed(1, 700);
  Feed(2, 524);
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_EQ(events_[0].fields["summary"], "job memory 700 MiB over 600 MiB");
  EXPECT_EQ(events_[1].type, EventType::kAlertResolved);
  EXPECT_EQ(events_[1].fields["summary"], "job memory 524 MiB, back under 600 MiB");
  EXPECT_EQ(events_[1].fields["resolved_by"], "condition");
  ASSERT_EQ(notices_.size(), 2u);
  EXPECT_EQ(notices_[1].summary, "job memory 524 MiB, back under 600 MiB");
  EXPECT_FALSE(notices_[1].run_ended);
}

TEST_F(AlertsObserverTest, OneResolvedByTheRunsEndSaysSo) {
  Feed(1, 700);
  observer_->OnFinish(2, &events_);
  ASSERT_EQ(events_.size(), 2u);
  EXPECT_EQ(events_[1].type, EventType::kAlertResolved);
  EXPECT_EQ(events_[1].fields["summary"], "the run ended (job memory was 700 MiB over 600 MiB)");
  EXPECT_EQ(events_[1].fields["resolved_by"], "run_end");
  ASSERT_EQ(notices_.size(), 2u);
  EXPECT_TRUE(notices_[1].run_ended);
  EXPECT_EQ(notices_[1].summary, "the run ended (job memory was 700 MiB over 600 MiB)");
}

}  // namespace
}  // namespace tv::observer_test

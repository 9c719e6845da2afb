#include "analysis/findings/rule.h"

#include <gtest/gtest.h>

namespace tv::rule_test {
namespace {

Thresholds Hold10() {
  Thresholds th;
  EXPECT_EQ(th.Set("hold_s", 10), "");
  return th;
}

TEST(RuleContext, OpensOnceTheConditionHeldAndClosesOnceClearForHold) {
  RunState run(Hold10(), 1);
  FindingLog log;
  std::vector<Event> events;
  RuleContext cx(run, log, &events);
  Tracker tr;
  std::vector<double> opened;
  for (int t = 0; t <= 40; ++t) {
    bool cond = t >= 5 && t < 20;  // true for 15 s, then clear
    if (cx.Due(tr, t, cond, 3)) {
      opened.push_back(t);
      cx.Open(FindingId::kSwapping, tr, t, FindingSubject::Job(), Opening{});
    }
  }
  EXPECT_EQ(opened, std::vector<double>{8});  // held 3 s from 5
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].type, EventType::kFindingOpen);
  EXPECT_EQ(events[1].type, EventType::kFindingClose);
  EXPECT_EQ(events[1].t, 30);  // clear from 20, for hold_s
  ASSERT_EQ(log.records().size(), 1u);
  EXPECT_EQ(log.records()[0].record.closed_t, 30);
  EXPECT_FALSE(tr.open());
}

TEST(RuleContext, AConditionBackWithinHoldKeepsTheFindingOpen) {
  RunState run(Hold10(), 1);
  FindingLog log;
  std::vector<Event> events;
  RuleContext cx(run, log, &events);
  Tracker tr;
  for (int t = 0; t <= 28; ++t) {
    bool cond = t < 10 || (t >= 15 && t < 20);  // clear for 5 s, under hold_s
    if (cx.Due(tr, t, cond, 0)) {
      cx.Open(FindingId::kSwapping, tr, t, FindingSubject::Job(), Opening{});
    }
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_TRUE(tr.open());
}

TEST(FindingLog, NotJudgedListsWhatAppliesButWasNotJudged) {
  FindingLog log;
  log.Want(FindingId::kInputBound);
  log.Want(FindingId::kStalled);
  log.Judging(FindingId::kStalled);
  std::vector<std::string_view> waiting;
  log.NotJudged(&waiting);
  EXPECT_EQ(waiting, std::vector<std::string_view>{"input-bound"});
  EXPECT_TRUE(log.Waiting(FindingId::kInputBound));
  EXPECT_FALSE(log.Waiting(FindingId::kStalled));
}

}  // namespace
}  // namespace tv::rule_test

// What the training processes said goes into events.jsonl and comes back as
// the same TrainingEvent; other lines are not marker events.
#include "store/marker_event_record.h"

#include <gtest/gtest.h>

#include "core/event_type.h"

namespace tv::marker_event_record_test {
namespace {

nlohmann::json Line(double t, EventType type, const nlohmann::ordered_json& fields) {
  nlohmann::ordered_json line = {{"t", t}, {"type", EventTypeName(type)}};
  line.update(fields);
  return nlohmann::json::parse(line.dump());
}

TEST(MarkerEventRecord, EachMarkerEventIsWrittenAndReadBack) {
  TrainingEvent begin;
  begin.type = EventType::kEpochBegin;
  begin.t = 1800000000.25;
  begin.pid = 412;
  begin.rank = 2;
  begin.epoch = 3;
  begin.call = 1;
  begin.planned_epochs = 10;
  nlohmann::ordered_json fields = MarkerEventFields(begin);
  EXPECT_EQ(fields.dump(), R"({"pid":412,"rank":2,"epoch":3,"call":1,"epochs":10})");
  TrainingEvent back;
  ASSERT_TRUE(MarkerEventFromJson(Line(begin.t, begin.type, fields), &back));
  EXPECT_EQ(back.type, EventType::kEpochBegin);
  EXPECT_EQ(back.t, begin.t);
  EXPECT_EQ(back.pid, 412);
  EXPECT_EQ(back.rank, 2);
  EXPECT_EQ(back.epoch, 3);
  EXPECT_EQ(back.call, 1);
  EXPECT_EQ(back.planned_epochs, 10);

  TrainingEvent died;
  died.type = EventType::kClientEnd;
  died.pid = 7;
  died.steps = 120;
  died.exception = "torch.OutOfMemoryError";
  died.message = "CUDA out of memory";
  ASSERT_TRUE(MarkerEventFromJson(Line(5, died.type, MarkerEventFields(died)), &back));
  EXPECT_EQ(back.rank, -1);
  EXPECT_EQ(back.steps, 120);
  EXPECT_EQ(back.exception, died.exception);
  EXPECT_EQ(back.message, died.message);
  EXPECT_FALSE(back.epoch);

  TrainingEvent logdir{.type = EventType::kTensorboardLogDir, .pid = 9, .log_dir = "/tb"};
  ASSERT_TRUE(MarkerEventFromJson(Line(6, logdir.type, MarkerEventFields(logdir)), &back));
  EXPECT_EQ(back.log_dir, "/tb");
  // The same as the sinks receive it, before it is a line.
  Event event{6.5, logdir.type, MarkerEventFields(logdir)};
  ASSERT_TRUE(MarkerEventFromEvent(event, &back));
  EXPECT_EQ(back.t, 6.5);
  EXPECT_EQ(back.pid, 9);
  EXPECT_EQ(back.log_dir, "/tb");
  EXPECT_FALSE(MarkerEventFromEvent(Event{7, EventType::kEnd, {{"exit_code", 0}}}, &back));
}

TEST(MarkerEventRecord, AnEpochEndKeepsItsOwnWaitAndTimedLoop) {
  TrainingEvent end;
  end.type = EventType::kEpochEnd;
  end.t = 1800000000.5;
  end.pid = 7;
  end.epoch = 0;
  end.steps = 40;
  end.wait_s = 0.5;
  end.timed_s = 4;
  nlohmann::ordered_json fields = MarkerEventFields(end);
  EXPECT_EQ(fields.dump(),
            R"({"pid":7,"rank":-1,"epoch":0,"steps":40,"wait_s":0.5,"timed_s":4.0})");
  TrainingEvent back;
  ASSERT_TRUE(MarkerEventFromJson(Line(end.t, end.type, fields), &back));
  EXPECT_EQ(back.wait_s, 0.5);
  EXPECT_EQ(back.timed_s, 4);
  // One without the other, or a negative one, is as absent: both go.
  fields.erase("timed_s");
  ASSERT_TRUE(MarkerEventFromJson(Line(end.t, end.type, fields), &back));
  EXPECT_FALSE(back.wait_s);
  EXPECT_FALSE(back.timed_s);
}

TEST(MarkerEventRecord, AnotherLineIsNoneAWrongKeyIsAsAbsent) {
  TrainingEvent e;
  EXPECT_FALSE(MarkerEventFromJson(Line(1, EventType::kEnd, {{"exit_code", 0}}), &e));
  EXPECT_FALSE(MarkerEventFromJson(nlohmann::json::parse(R"({"type":"phase_begin"})"), &e));
  EXPECT_FALSE(MarkerEventFromJson(nlohmann::json::parse(R"({"t":1,"type":"nonsense"})"), &e));
  EXPECT_FALSE(MarkerEventFromJson(nlohmann::json::array(), &e));
  ASSERT_TRUE(MarkerEventFromJson(
      nlohmann::json::parse(
          R"({"t":2,"type":"phase_begin","pid":"x","rank":2.5,"phase":3,"epoch":99999999999999999999})"),
      &e));
  EXPECT_EQ(e.type, EventType::kPhaseBegin);
  EXPECT_EQ(e.pid, 0);
  EXPECT_EQ(e.rank, -1);
  EXPECT_EQ(e.phase, "");
  EXPECT_FALSE(e.epoch);
}

TEST(MarkerEventRecord, AMalformedMarkerIsSaidWithItsMessage) {
  Event e{1, EventType::kMarkerMalformed, MalformedMarkerFields("line 3: not JSON")};
  EXPECT_EQ(
      e.fields.dump(),
      R"({"message":"line 3: not JSON","note":"further malformed markers are only counted"})");
  EXPECT_EQ(MalformedMarkerMessage(e), "line 3: not JSON");
  EXPECT_EQ(MalformedMarkerMessage(Event{1, EventType::kEnd, {{"message", "x"}}}), "");
}

}  // namespace
}  // namespace tv::marker_event_record_test

namespace tv::marker_event_profile_test {
namespace {

TEST(MarkerEventRecord, StacksAndProfileEventsRoundTrip) {
  TrainingEvent stacks{.type = EventType::kStacks, .pid = 9, .rank = 1, .t = 5};
  stacks.stacks = StackWait{.reason = "request",
                            .request = "1-2",
                            .file = "stacks/1-request-rank1-9.txt",
                            .waits_in = "collective",
                            .frame = "all_reduce (torch/distributed/distributed_c10d.py:2501)",
                            .at = "/job/train.py:40 in <module>",
                            .code = "dist.all_reduce(t)",
                            .threads = 3};
  TrainingEvent profile{.type = EventType::kProfile, .pid = 9, .rank = 1, .t = 6, .steps = 20};
  profile.profile = ProfileCapture{.reason = "input-bound",
                                   .request = "",
                                   .dir = "profiles/input-bound-1-300",
                                   .steps = 20,
                                   .seconds = 2.5};
  profile.profile->figures.steps = 20;
  profile.profile->figures.step_s = 0.125;
  profile.profile->figures.data_loader_share = 0.4;
  profile.profile->figures.top_ops = {{"aten::mm", 0.3}};
  profile.profile->figures.top_kernels = {{"volta_sgemm", 0.25}, {"elementwise", 0.05}};
  for (const TrainingEvent& e : {stacks, profile}) {
    nlohmann::json line = MarkerEventFields(e);
    line["t"] = e.t;
    line["type"] = std::string(EventTypeName(e.type));
    TrainingEvent back;
    ASSERT_TRUE(MarkerEventFromJson(line, &back)) << line.dump();
    EXPECT_EQ(MarkerEventFields(back), MarkerEventFields(e)) << line.dump();
  }
}

}  // namespace
}  // namespace tv::marker_event_profile_test

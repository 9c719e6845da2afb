#include "markers/protocol.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace tv::protocol_test {
namespace {

TEST(MarkerProtocol, RoundTripsEveryType) {
  Marker m;
  m.type = MarkerType::kEpochEnd;
  m.pid = 42;
  m.rank = 1;
  m.slot = 3;
  m.t = 1700000000.25;
  m.epoch = 7;
  m.steps = 120;
  std::string error;
  auto back = ParseMarker(EncodeMarker(m), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->type, MarkerType::kEpochEnd);
  EXPECT_EQ(back->pid, 42);
  EXPECT_EQ(back->rank, 1);
  EXPECT_EQ(back->slot, 3);
  EXPECT_DOUBLE_EQ(back->t, 1700000000.25);
  EXPECT_EQ(back->epoch, 7);
  EXPECT_EQ(back->steps, 120);

  Marker s;
  s.type = MarkerType::kScalars;
  s.t = 1;
  s.scalars = {{"loss", 0.5}, {"val/acc", 0.75}};
  back = ParseMarker(EncodeMarker(s), &error);
  ASSERT_TRUE(back) << error;
  ASSERT_EQ(back->scalars.size(), 2u);
  EXPECT_EQ(back->scalars[1].first, "val/acc");
  EXPECT_DOUBLE_EQ(back->scalars[1].second, 0.75);

  Marker a;
  a.type = MarkerType::kAllocator;
  a.t = 1;
  a.allocator.push_back({.device = 1, .allocated_bytes = 1024, .peak_allocated_bytes = 4096});
  back = ParseMarker(EncodeMarker(a), &error);
  ASSERT_TRUE(back) << error;
  ASSERT_EQ(back->allocator.size(), 1u);
  EXPECT_EQ(back->allocator[0].device, 1);
  EXPECT_EQ(back->allocator[0].allocated_bytes, 1024);
  EXPECT_EQ(back->allocator[0].peak_allocated_bytes, 4096);
  EXPECT_FALSE(back->allocator[0].reserved_bytes);

  Marker c;
  c.type = MarkerType::kEpochBegin;
  c.t = 1;
  c.epoch = 3;
  c.call = 4;
  back = ParseMarker(EncodeMarker(c), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->call, 4);
  c.call.reset();
  back = ParseMarker(EncodeMarker(c), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_FALSE(back->call);  // older clients say no call

  Marker u;
  u.type = MarkerType::kAllocator;
  u.t = 1;
  u.allocator.push_back({.device = 0, .uuid = "GPU-5b4f\"x", .allocated_bytes = 1});
  u.allocator.push_back({.device = 1, .allocated_bytes = 2});
  back = ParseMarker(EncodeMarker(u), &error);
  ASSERT_TRUE(back) << error;
  ASSERT_EQ(back->allocator.size(), 2u);
  EXPECT_EQ(back->allocator[0].uuid, "GPU-5b4f\"x");
  EXPECT_EQ(back->allocator[1].uuid, "");  // the field is optional

  Marker p;
  p.type = MarkerType::kPhaseBegin;
  p.t = 1;
  p.phase = "eval";
  back = ParseMarker(EncodeMarker(p), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->phase, "eval");
}

TEST(MarkerProtocol, ByeCarriesTheExceptionTheProcessDiedOf) {
  Marker m;
  m.type = MarkerType::kBye;
  m.pid = 9;
  m.steps = 3;
  m.exception = "ValueError";
  m.message = "bad \"shape\"";
  std::string error;
  auto back = ParseMarker(EncodeMarker(m), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->exception, "ValueError");
  EXPECT_EQ(back->message, "bad \"shape\"");
  EXPECT_EQ(back->steps, 3);  // all it took: an epoch it never ended counts from its begin
  m.exception.clear();
  EXPECT_EQ(EncodeMarker(m).find("exception"), std::string::npos);
}

TEST(MarkerProtocol, RejectsMalformedWithAReason) {
  struct Case {
    const char* text;
    const char* reason;
  } cases[] = {
      {"", "not a JSON object"},
      {"[1,2]", "not a JSON object"},
      {R"({"type":"hello","t":1})", "no protocol version"},
      {R"({"v":2,"type":"hello","t":1})", "protocol version 2"},
      {R"({"v":1,"type":"dance","t":1})", "unknown type"},
      {R"({"v":1,"type":"hello"})", "no time"},
      {R"({"v":1,"type":"epoch_begin","t":1})", "\"epoch\""},
      {R"({"v":1,"type":"epoch_end","t":1,"epoch":-1})", "\"epoch\""},
      {R"({"v":1,"type":"epoch_end","t":1,"epoch":1,"steps":"x"})", "\"steps\""},
      {R"({"v":1,"type":"bye","t":1,"steps":-1})", "\"steps\""},
      {R"({"v":1,"type":"phase_begin","t":1,"phase":"a b"})", "\"phase\""},
      {R"({"v":1,"type":"scalars","t":1,"values":{"loss":"high"}})", "scalar \"loss\""},
      {R"({"v":1,"type":"allocator","t":1,"devices":[{"allocated_bytes":1}]})", "\"device\""},
      {R"({"v":1,"type":"allocator","t":1,"devices":[{"device":0,"uuid":7}]})", "\"uuid\""},
      {R"({"v":1,"type":"epoch_begin","t":1,"epoch":0,"call":0})", "\"call\""},
      {"{\"v\":1,\"type\":\"hello\",\"t\":1", "not a JSON object"},
      // Found by fuzzing (tests/fuzz/corpus/marker/pid_out_of_int): numbers that
      // no int holds were cast to int, which is undefined behaviour.
      {R"({"v":1,"type":"epoch_begin","pid":49223372036854775807241,"t":1,"epoch":1})",
       "\"pid\" must be a whole number"},
      {R"({"v":1,"type":"hello","rank":-1e300,"t":1})", "\"rank\""},
      {R"({"v":1,"type":"hello","slot":2147483648,"t":1})", "\"slot\""},
      {R"({"v":1,"type":"allocator","t":1,"devices":[{"device":4294967296}]})", "\"device\""},
      {R"({"v":4294967297,"type":"hello","t":1})", "protocol version 4294967297"},
  };
  for (const Case& c : cases) {
    std::string error;
    EXPECT_FALSE(ParseMarker(c.text, &error)) << c.text;
    EXPECT_NE(error.find(c.reason), std::string::npos) << c.text << " -> " << error;
  }
}

TEST(MarkerProtocol, NumbersOutOfRangeAreRefusedBeforeAnyCast) {
  auto parse = [](std::string_view text) {
    std::string error;
    auto m = ParseMarker(text, &error);
    return m ? std::string("ok") : error;
  };
  EXPECT_EQ(parse(R"({"v":1,"type":"hello","pid":12,"rank":-1,"slot":255,"t":1})"), "ok");
  EXPECT_NE(parse(R"({"v":1,"type":"hello","pid":1e300,"t":1})").find("\"pid\""),
            std::string::npos);
  EXPECT_NE(parse(R"({"v":1,"type":"hello","pid":-3,"t":1})").find("\"pid\""), std::string::npos);
  EXPECT_NE(parse(R"({"v":1,"type":"hello","pid":1.5,"t":1})").find("\"pid\""), std::string::npos);
  EXPECT_NE(parse(R"({"v":1,"type":"hello","rank":-2,"t":1})").find("\"rank\""), std::string::npos);
  EXPECT_NE(parse(R"({"v":1,"type":"hello","rank":4294967297,"t":1})").find("\"rank\""),
            std::string::npos);
  EXPECT_NE(parse(R"({"v":1,"type":"hello","slot":256,"t":1})").find("\"slot\""),
            std::string::npos);
  EXPECT_NE(parse(R"({"v":1,"type":"hello","slot":"3","t":1})").find("\"slot\""),
            std::string::npos);
  EXPECT_NE(
      parse(R"({"v":1,"type":"allocator","t":1,"devices":[{"device":1e20}]})").find("\"device\""),
      std::string::npos);
  std::string many = R"({"v":1,"type":"allocator","t":1,"devices":[)";
  for (int i = 0; i < 65; ++i) many += (i ? ",{\"device\":0}" : "{\"device\":0}");
  many += "]}";
  EXPECT_NE(parse(many).find("more than 64 devices"), std::string::npos);
}

TEST(MarkerProtocol, EpochEndCarriesItsWaitAndTimedLoopBothOrNeither) {
  Marker m;
  m.type = MarkerType::kEpochEnd;
  m.t = 1;
  m.epoch = 2;
  m.wait_s = 0.25;
  m.timed_s = 1.5;
  std::string error;
  auto back = ParseMarker(EncodeMarker(m), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_DOUBLE_EQ(*back->wait_s, 0.25);
  EXPECT_DOUBLE_EQ(*back->timed_s, 1.5);
  auto parse = [](std::string_view keys) {
    std::string error;
    std::string text =
        std::string(R"({"v":1,"type":"epoch_end","t":1,"epoch":0)") + std::string(keys) + "}";
    return ParseMarker(text, &error) ? std::string("ok") : error;
  };
  EXPECT_EQ(parse(""), "ok");  // a process that does not time its wait
  EXPECT_EQ(parse(R"(,"wait_s":0,"timed_s":0)"), "ok");
  for (std::string_view bad : {R"(,"wait_s":1)", R"(,"timed_s":1)", R"(,"wait_s":-1,"timed_s":1)",
                               R"(,"wait_s":2,"timed_s":1)", R"(,"wait_s":"1","timed_s":1)"}) {
    EXPECT_NE(parse(bad).find("\"wait_s\" and \"timed_s\" must"), std::string::npos)
        << bad << " -> " << parse(bad);
  }
}

TEST(MarkerProtocol, EpochBeginCarriesThePlannedEpochsInRange) {
  Marker m;
  m.type = MarkerType::kEpochBegin;
  m.t = 1;
  m.epoch = 3;
  m.planned_epochs = 50;
  std::string error;
  std::string text = EncodeMarker(m);
  EXPECT_NE(text.find(R"("epochs":50)"), std::string::npos) << text;
  auto back = ParseMarker(text, &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->planned_epochs, 50);
  m.planned_epochs.reset();
  back = ParseMarker(EncodeMarker(m), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_FALSE(back->planned_epochs);  // older clients say nothing of it

  auto parse = [](std::string_view epochs) {
    std::string error;
    std::string text = std::string(R"({"v":1,"type":"epoch_begin","t":1,"epoch":0,"epochs":)") +
                       std::string(epochs) + "}";
    auto m = ParseMarker(text, &error);
    return m ? std::string("ok") : error;
  };
  EXPECT_EQ(parse("1"), "ok");
  EXPECT_EQ(parse("9007199254740992"), "ok");  // 2^53
  for (std::string_view bad :
       {"0", "-5", "2.5", "1e300", "\"50\"", "null", "9007199254740993", "18446744073709551615"}) {
    EXPECT_NE(parse(bad).find("\"epochs\" must be a whole number from 1"), std::string::npos)
        << bad << " -> " << parse(bad);
  }
  // Only an epoch's beginning plans epochs: elsewhere the key means nothing.
  std::string ignored;
  auto end = ParseMarker(R"({"v":1,"type":"epoch_end","t":1,"epoch":0,"epochs":-1})", &ignored);
  ASSERT_TRUE(end) << ignored;
  EXPECT_FALSE(end->planned_epochs);
}

TEST(MarkerProtocol, StepsFileSitsBesideTheSocket) {
  EXPECT_EQ(StepsPathFor("/tmp/trainvitals-abc/markers.sock"), "/tmp/trainvitals-abc/steps");
}

TEST(MarkerProtocol, TensorboardLogDirCarriesAnAbsolutePath) {
  Marker m;
  m.type = MarkerType::kTensorboardLogDir;
  m.t = 1;
  const std::string log_dir = (std::filesystem::temp_directory_path() / "logs" / "fit").string();
  m.log_dir = log_dir;
  std::string error;
  auto back = ParseMarker(EncodeMarker(m), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->type, MarkerType::kTensorboardLogDir);
  EXPECT_EQ(back->log_dir, log_dir);
  EXPECT_FALSE(
      ParseMarker(R"({"v":1,"type":"tensorboard_log_dir","t":1,"log_dir":"logs"})", &error));
  EXPECT_NE(error.find("absolute"), std::string::npos) << error;
  EXPECT_FALSE(ParseMarker(R"({"v":1,"type":"tensorboard_log_dir","t":1})", &error));
}

TEST(MarkerProtocol, StacksOfferAndRequestRoundTripAndAreChecked) {
  Marker offer;
  offer.type = MarkerType::kStacks;
  offer.pid = 7;
  offer.t = 1;
  offer.signal = 40;
  std::string error;
  auto back = ParseMarker(EncodeMarker(offer), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->type, MarkerType::kStacks);
  EXPECT_EQ(back->signal, 40);
  Marker ask;
  ask.type = MarkerType::kRequest;
  ask.t = 1;
  ask.what = "stacks";
  ask.id = "123-456";
  back = ParseMarker(EncodeMarker(ask), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->what, "stacks");
  EXPECT_EQ(back->id, "123-456");
  // SIGKILL, SIGTERM: never a signal the monitor sends.
  for (const char* bad : {R"({"v":1,"type":"stacks","pid":1,"t":1,"signal":9})",
                          R"({"v":1,"type":"stacks","pid":1,"t":1})",
                          R"({"v":1,"type":"request","pid":1,"t":1,"what":"stacks","id":"../x"})",
                          R"({"v":1,"type":"request","pid":1,"t":1,"what":"rm","id":"a"})"}) {
    EXPECT_FALSE(ParseMarker(bad, &error)) << bad;
  }
}

TEST(MarkerProtocol, ProfileRequestsAndAnswersRoundTripAndAreChecked) {
  Marker ask;
  ask.type = MarkerType::kRequest;
  ask.t = 1;
  ask.what = "profile";
  ask.id = "9-1";
  ask.steps = 5;
  ask.target = 1;
  std::string error;
  auto back = ParseMarker(EncodeMarker(ask), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->what, "profile");
  EXPECT_EQ(back->steps, 5);
  EXPECT_EQ(back->target, 1);
  Marker done;
  done.type = MarkerType::kProfile;
  done.t = 1;
  done.reason = "input-bound";
  done.dir = "profiles/input-bound-0-40";
  done.steps = 20;
  done.seconds = 1.5;
  back = ParseMarker(EncodeMarker(done), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->dir, "profiles/input-bound-0-40");
  EXPECT_EQ(back->seconds, 1.5);
  // Only a directory under the run directory.
  for (const char* bad : {R"({"v":1,"type":"profile","pid":1,"t":1,"reason":"r","dir":"/etc"})",
                          R"({"v":1,"type":"profile","pid":1,"t":1,"reason":"r","dir":"a/../.."})",
                          R"({"v":1,"type":"profile","pid":1,"t":1,"dir":"profiles/x"})"}) {
    EXPECT_FALSE(ParseMarker(bad, &error)) << bad;
  }
}

}  // namespace
}  // namespace tv::protocol_test

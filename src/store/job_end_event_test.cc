#include "store/job_end_event.h"

#include <gtest/gtest.h>

#include <csignal>

namespace tv::job_end_event_test {
namespace {

nlohmann::json Line(const char* text) { return nlohmann::json::parse(text); }

TEST(JobEndEvent, TheEndEventKeepsANullExitCodeAndASignalOnlyWhenThereIsOne) {
  EXPECT_EQ(EndEventFields({0, std::nullopt}).dump(), R"({"exit_code":0})");
  EXPECT_EQ(EndEventFields({std::nullopt, SIGKILL}).dump(), R"({"exit_code":null,"signal":9})");
  EXPECT_EQ(OomKillEventFields({2, "/sys/fs/cgroup/job"}).dump(),
            R"({"count":2,"cgroup":"/sys/fs/cgroup/job"})");
}

TEST(JobEndEvent, WhatIsWrittenIsReadBack) {
  nlohmann::ordered_json fields = EndEventFields({137, SIGKILL});
  EXPECT_EQ(EndEventFromFields(fields).exit_code, 137);
  EXPECT_EQ(EndEventFromFields(fields).signal, SIGKILL);

  nlohmann::json line = OomKillEventFields({3, "/x"});
  line["t"] = 1.5;
  line["type"] = "oom_kill";
  OomKillEvent kills;
  ASSERT_TRUE(OomKillEventFromJson(line, &kills));
  EXPECT_EQ(kills.count, 3u);
  EXPECT_EQ(kills.cgroup, "/x");
}

TEST(JobEndEvent, LinesOfOtherTypesOrWithoutATimeAreNotRead) {
  EndEvent end;
  OomKillEvent kills;
  EXPECT_FALSE(EndEventFromJson(Line(R"({"t":3,"type":"start"})"), &end));
  EXPECT_FALSE(EndEventFromJson(Line(R"({"type":"end","exit_code":0})"), &end));
  EXPECT_FALSE(EndEventFromJson(Line(R"([1,2])"), &end));
  EXPECT_FALSE(OomKillEventFromJson(Line(R"({"t":2,"type":"end","exit_code":1})"), &kills));
  ASSERT_TRUE(EndEventFromJson(Line(R"({"t":2,"type":"end","exit_code":137,"signal":9})"), &end));
  EXPECT_EQ(end.exit_code, 137);
  EXPECT_EQ(end.signal, SIGKILL);
}

TEST(JobEndEvent, AKeyOfAnotherTypeIsAsAbsent) {
  EndEvent end;
  ASSERT_TRUE(
      EndEventFromJson(Line(R"({"t":2,"type":"end","exit_code":"137","signal":1e20})"), &end));
  EXPECT_FALSE(end.exit_code);
  EXPECT_FALSE(end.signal);
  ASSERT_TRUE(EndEventFromJson(Line(R"({"t":2,"type":"end","signal":4294967296})"), &end));
  EXPECT_FALSE(end.signal);
  OomKillEvent kills;
  ASSERT_TRUE(
      OomKillEventFromJson(Line(R"({"t":1,"type":"oom_kill","count":-1,"cgroup":7})"), &kills));
  EXPECT_EQ(kills.count, 0u);
  EXPECT_EQ(kills.cgroup, "");
}

}  // namespace
}  // namespace tv::job_end_event_test

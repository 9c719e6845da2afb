#include "sinks/row_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/aggregator.h"
#include "sinks/jsonl_sink.h"

namespace tv::row_json_test {
namespace {

TEST(RowJson, WritesMeanAndMaxAndLeavesAbsentValuesOut) {
  Aggregator agg;
  Sample s;
  s.job.rss_bytes = 100;
  s.host.cpu_util_ratio = 0.25;
  s.host.core_util_ratio = {0.5, 0.0};
  agg.Add(s);
  s.job.rss_bytes = 300;
  s.host.cpu_util_ratio = 0.75;
  agg.Add(s);
  std::string line;
  AppendRowJson(agg.Take(1700000000.5, 1.0), &line);
  auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["job"]["rss_bytes"], 200);
  EXPECT_EQ(j["job"]["rss_bytes_max"], 300);
  EXPECT_DOUBLE_EQ(j["host"]["cpu_util_ratio"].get<double>(), 0.5);
  EXPECT_FALSE(j["job"].contains("memory_bytes"));             // never read: absent, not 0
  EXPECT_FALSE(j["host"].contains("memory_total_bytes_max"));  // no max for a constant
  EXPECT_EQ(j["host"]["core_util_ratio"].size(), 2u);
  EXPECT_EQ(j["gpus"].size(), 0u);
  EXPECT_DOUBLE_EQ(j["t"].get<double>(), 1700000000.5);
}

TEST(RowJson, DataWaitIsTheRowsMeanForTheJobAndEachRankThatTimesIt) {
  // Rank 0 waits 0.2 then 0.4 of its ticks; rank 1 does not time its wait.
  Aggregator agg;
  for (double wait : {0.2, 0.4}) {
    Sample s;
    s.training.data_wait_ratio = wait;
    s.training.ranks = {{0, 100, 10, 9, wait}, {1, 101, 10, 9, std::nullopt}};
    agg.Add(s);
  }
  std::string line;
  AppendRowJson(agg.Take(1700000000.5, 1.0), &line);
  auto j = nlohmann::json::parse(line);
  EXPECT_DOUBLE_EQ(j["training"]["data_wait_ratio"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(j["training"]["data_wait_ratio_max"].get<double>(), 0.4);
  ASSERT_EQ(j["training"]["ranks"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["training"]["ranks"][0]["data_wait_ratio"].get<double>(), 0.3);
  EXPECT_FALSE(j["training"]["ranks"][1].contains("data_wait_ratio"));  // not measured
  // The next row starts afresh.
  Sample s;
  s.training.ranks = {{0, 100, 11, 10, std::nullopt}, {1, 101, 11, 10, std::nullopt}};
  agg.Add(s);
  line.clear();
  AppendRowJson(agg.Take(1700000001.5, 2.0), &line);
  j = nlohmann::json::parse(line);
  EXPECT_FALSE(j["training"].contains("data_wait_ratio"));
  EXPECT_FALSE(j["training"]["ranks"][0].contains("data_wait_ratio"));
}

TEST(RowJson, EachRankCarriesItsMemoryFromTheProcessTree) {
  Aggregator agg;
  Sample s;
  s.training.ranks = {{0, 100, 10, 9, std::nullopt}, {1, 101, 10, 9, std::nullopt}};
  s.job.members = {{.pid = 100, .memory_bytes = 300e6, .anon_pss_bytes = 200e6},
                   {.pid = 101, .memory_bytes = 310e6}};  // a reading without Pss_Anon
  agg.Add(s);
  std::string line;
  AppendRowJson(agg.Take(1700000000.5, 1.0), &line);
  auto ranks = nlohmann::json::parse(line)["training"]["ranks"];
  EXPECT_EQ(ranks[0]["memory_bytes"], 300000000);
  EXPECT_EQ(ranks[0]["memory_anon_pss_bytes"], 200000000);
  EXPECT_EQ(ranks[1]["memory_bytes"], 310000000);
  EXPECT_FALSE(ranks[1].contains("memory_anon_pss_bytes"));
}

TEST(RowJson, GpuRowsCarryIndexAndTableKeys) {
  Aggregator agg;
  Sample s;
  GpuSample g;
  g.index = 1;
  g.physical_index = 3;
  g.util_ratio = 0.9;
  g.memory_used_bytes = 1e9;
  s.gpus.push_back(g);
  agg.Add(s);
  std::string line;
  AppendRowJson(agg.Take(1, 1), &line);
  auto j = nlohmann::json::parse(line);
  ASSERT_EQ(j["gpus"].size(), 1u);
  EXPECT_EQ(j["gpus"][0]["index"], 1);
  EXPECT_EQ(j["gpus"][0]["physical_index"], 3);
  EXPECT_EQ(j["gpus"][0]["memory_used_bytes"], 1000000000);
  EXPECT_DOUBLE_EQ(j["gpus"][0]["util_ratio_max"].get<double>(), 0.9);
}

TEST(RowJson, ProcessNamesCutMidCharacterOrHoldingControlsStayJson) {
  Aggregator agg;
  Sample s;
  GpuSample g;
  g.processes.items[0].pid = 7;
  g.processes.items[0].name = "caf\xC3\xA9\xC3";  // cut in the second "é"
  g.processes.items[1].pid = 8;
  g.processes.items[1].name = "a\x1b[2J\"\\";
  g.processes.size = 2;
  g.processes.known = true;
  s.gpus.push_back(g);
  agg.Add(s);
  std::string line;
  AppendRowJson(agg.Take(1, 1), &line);
  auto j = nlohmann::json::parse(line);  // throws on invalid UTF-8
  ASSERT_EQ(j["gpus"][0]["processes"].size(), 2u) << line;
  EXPECT_EQ(j["gpus"][0]["processes"][0]["name"], "caf\xC3\xA9\xEF\xBF\xBD");
  EXPECT_EQ(j["gpus"][0]["processes"][1]["name"], "a\x1b[2J\"\\");
}

TEST(RowJson, NonFiniteValuesBecomeNull) {
  std::string out;
  AppendJsonNumber(std::numeric_limits<double>::infinity(), false, &out);
  EXPECT_EQ(out, "null");
}

TEST(EventJson, PutsTimeAndTypeFirst) {
  std::string out;
  AppendEventJson(Event{12.3456, EventType::kProcessStart, {{"pid", 7}, {"name", "a \"b\""}}},
                  &out);
  EXPECT_EQ(out, "{\"t\":12.346,\"type\":\"process_start\",\"pid\":7,\"name\":\"a \\\"b\\\"\"}\n");
}

}  // namespace
}  // namespace tv::row_json_test

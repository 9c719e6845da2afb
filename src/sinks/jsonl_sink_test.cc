#include "sinks/jsonl_sink.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tv {
namespace {

std::vector<double> EventTimes(const std::string& path) {
  std::ifstream in(path);
  std::vector<double> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line)["t"]);
  return out;
}

TEST(JsonlSink, EventsAreWrittenInTimeOrder) {
  std::string dir =
      std::filesystem::temp_directory_path() / ("jsonl_test." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  JsonlSink sink(dir + "/samples.jsonl", dir + "/events.jsonl");
  ASSERT_TRUE(sink.ok());
  // As one tick hands them over: the process source's event at the tick's
  // time, then a marker and an epoch stamped earlier by the training process.
  sink.OnEvent(Event{100.2, "process_start"});
  sink.OnEvent(Event{100.15, "epoch_end"});
  sink.OnEvent(Event{100.15, "epoch"});
  Row row;
  row.t = 101;
  sink.OnRow(row);
  EXPECT_EQ(EventTimes(dir + "/events.jsonl"), (std::vector<double>{100.15, 100.15, 100.2}));
  sink.OnEvent(Event{100.8, "phase_begin"});  // sent before the row, read after it
  sink.OnEvent(Event{100.4, "late"});
  sink.OnEvent(Event{101.0, "client_end"});
  sink.OnClose();
  EXPECT_EQ(EventTimes(dir + "/events.jsonl"),
            (std::vector<double>{100.15, 100.15, 100.2, 100.4, 100.8, 101.0}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tv

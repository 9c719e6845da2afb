#include "sinks/jsonl_sink.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/aggregator.h"

namespace tv::jsonl_sink_test {
namespace {

namespace fs = std::filesystem;

// A 64 KiB tmpfs of its own, so the disk can really be filled (needs root).
class FullDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("tv-jsonl-{}", ::getpid());
    fs::create_directories(dir_);
    if (::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=64k") != 0) {
      fs::remove(dir_);
      GTEST_SKIP() << "cannot mount a tmpfs here (not root?)";
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Fills what is left of the file system.
  void Fill() {
    std::ofstream filler(dir_ / "filler", std::ios::binary);
    std::string block(4096, 'x');
    while (filler.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
  }
  void Free() { fs::remove(dir_ / "filler"); }
  static Row MakeRow(int k) {
    Aggregator agg;
    Sample s;
    s.job.rss_bytes = 1000.0 + k;
    s.host.cpu_util_ratio = 0.25;
    s.host.core_util_ratio.assign(16, 0.5);  // a line of a few hundred bytes
    agg.Add(s);
    return agg.Take(1700000000.0 + k, k);
  }
  // Every line of samples.jsonl, each checked to be a whole JSON object.
  std::vector<nlohmann::json> Lines() {
    std::ifstream in(dir_ / "samples.jsonl", std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    std::string all = text.str();
    EXPECT_TRUE(all.empty() || all.back() == '\n') << "ends in a partial line";
    std::vector<nlohmann::json> out;
    std::istringstream lines(all);
    for (std::string line; std::getline(lines, line);) {
      out.push_back(nlohmann::json::parse(line));  // throws on a broken line
    }
    return out;
  }
  fs::path dir_;
  bool mounted_ = false;
};

TEST_F(FullDisk, NeverLeavesAPartialLineAndCountsOnlyWrittenRows) {
  JsonlSink sink((dir_ / "samples.jsonl").string(), (dir_ / "events.jsonl").string());
  ASSERT_TRUE(sink.ok());
  int k = 0;
  for (; k < 3; ++k) sink.OnRow(MakeRow(k));
  Fill();
  // The file's last page still holds a few lines; go on until it is full.
  for (int i = 0; i < 40; ++i) sink.OnRow(MakeRow(k++));
  EXPECT_GT(sink.rows_lost(), 0u);
  std::vector<nlohmann::json> lines = Lines();
  EXPECT_EQ(lines.size(), sink.rows_written());
  uint64_t before = sink.rows_written();
  // Space returns: writing goes on by itself, after the last complete line.
  Free();
  for (int i = 0; i < 5; ++i) sink.OnRow(MakeRow(k++));
  lines = Lines();
  EXPECT_EQ(sink.rows_written(), before + 5);
  EXPECT_EQ(lines.size(), sink.rows_written());
  EXPECT_EQ(lines.back()["elapsed_s"], k - 1);
}

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
  sink.OnEvent(Event{100.2, EventType::kProcessStart});
  sink.OnEvent(Event{100.15, EventType::kEpochEnd});
  sink.OnEvent(Event{100.15, EventType::kEpoch});
  Row row;
  row.t = 101;
  sink.OnRow(row);
  EXPECT_EQ(EventTimes(dir + "/events.jsonl"), (std::vector<double>{100.15, 100.15, 100.2}));
  sink.OnEvent(Event{100.8, EventType::kPhaseBegin});  // sent before the row, read after it
  sink.OnEvent(Event{100.4, EventType::kDetached});
  sink.OnEvent(Event{101.0, EventType::kClientEnd});
  sink.OnClose();
  EXPECT_EQ(EventTimes(dir + "/events.jsonl"),
            (std::vector<double>{100.15, 100.15, 100.2, 100.4, 100.8, 101.0}));
  std::filesystem::remove_all(dir);
}

TEST(JsonlSink, SaysWhenAFileCannotBeOpened) {
  JsonlSink sink("/nonexistent-dir/samples.jsonl", "/nonexistent-dir/events.jsonl");
  EXPECT_FALSE(sink.ok());
  EXPECT_NE(sink.open_error().find("/nonexistent-dir/samples.jsonl"), std::string::npos);
  sink.OnRow(Row{});
  EXPECT_EQ(sink.rows_written(), 0u);
  EXPECT_EQ(sink.rows_lost(), 1u);
}

}  // namespace
}  // namespace tv::jsonl_sink_test

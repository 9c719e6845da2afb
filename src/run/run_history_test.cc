#include "run/run_history.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "core/config.h"
#include "run/run_meta.h"
#include "store/summary_fixture.h"

namespace tv::run_history_test {
namespace {

namespace fs = std::filesystem;

double LocalMidnight(int year, int month, int day) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_isdst = -1;
  return static_cast<double>(std::mktime(&tm));
}

TEST(ParseSince, TakesDurationsBackFromNow) {
  EXPECT_EQ(ParseSince("7d", 1e9), 1e9 - 7 * 86400);
  EXPECT_EQ(ParseSince("12h", 1e9), 1e9 - 12 * 3600);
  EXPECT_EQ(ParseSince("30m", 1e9), 1e9 - 1800);
  EXPECT_EQ(ParseSince("45s", 1e9), 1e9 - 45);
  EXPECT_EQ(ParseSince("2w", 1e9), 1e9 - 14 * 86400);
  EXPECT_EQ(ParseSince("1.5h", 1e9), 1e9 - 5400);
}

TEST(ParseSince, TakesDatesAndIsoTimes) {
  EXPECT_EQ(ParseSince("2026-11-30", 0), LocalMidnight(2026, 11, 30));
  EXPECT_EQ(ParseSince("2026-11-30T14:05", 0), LocalMidnight(2026, 11, 30) + 14 * 3600 + 300);
  EXPECT_EQ(ParseSince("2026-11-30 14:05:09", 0), LocalMidnight(2026, 11, 30) + 14 * 3600 + 309);
  EXPECT_EQ(ParseSince("2026-11-30T14:05:09Z", 0), 1796047509);
  EXPECT_EQ(ParseSince("2026-11-30T15:05:09+01:00", 0), 1796047509);
  EXPECT_EQ(ParseSince("2026-11-30T13:35:09-00:30", 0), 1796047509);
}

TEST(ParseSince, RefusesAnythingElseSayingWhatItTakes) {
  for (const char* bad : {"", "yesterday", "7", "7x", "d", "-3d", "2026-13-01", "2026-11-30T25:00",
                          "2026-11-30T14", "2026-11-30X", "2026-11-30T14:00+1", "30/11/2026"}) {
    try {
      ParseSince(bad, 1e9);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ConfigError& e) {
      EXPECT_EQ(std::string(e.what()),
                fmt::format("--since: '{}' is not a time: give a date (2026-11-30), an ISO time "
                            "(2026-11-30T14:00, 2026-11-30T14:00:00Z) or a duration back from now "
                            "(7d, 12h, 30m)",
                            bad));
    }
  }
}

class RunHistoryDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("tv-history-{}-{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "run");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / "run" / name) << text;
  }
  fs::path dir_;
};

TEST_F(RunHistoryDir, SaysWhyARunDirectoryIsSkipped) {
  std::string why;
  EXPECT_FALSE(ReadRunDir((dir_ / "run").string(), CostRates{}, &why));
  EXPECT_EQ(why, "no summary.json");
  Write("summary.json", "{\"duration_s\": 3");
  EXPECT_FALSE(ReadRunDir((dir_ / "run").string(), CostRates{}, &why));
  EXPECT_EQ(why, "summary.json is not JSON");
  Write("summary.json", "[1, 2]");
  EXPECT_FALSE(ReadRunDir((dir_ / "run").string(), CostRates{}, &why));
  EXPECT_EQ(why, "summary.json is not a JSON object");
}

TEST_F(RunHistoryDir, RefusesHostileSummariesNamingFileAndKey) {
  std::string why;
  std::string fifo = (dir_ / "run" / "summary.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(ReadRunDir((dir_ / "run").string(), CostRates{}, &why));  // returns at once
  EXPECT_EQ(why, "summary.json is a FIFO, not a regular file");
  fs::remove(fifo);
  Write("summary.json", R"({"duration_s": 3, "cost": null})");
  EXPECT_FALSE(ReadRunDir((dir_ / "run").string(), CostRates{}, &why));
  EXPECT_EQ(why, "summary.json: key cost: expected an object, got null");
  Write("summary.json", R"({"duration_s": 3, "epochs": {"1": {}}})");
  EXPECT_FALSE(ReadRunDir((dir_ / "run").string(), CostRates{}, &why));
  EXPECT_EQ(why, "summary.json: key epochs: expected an array, got an object");
  Write("summary.json", "{\"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  EXPECT_FALSE(ReadRunDir((dir_ / "run").string(), CostRates{}, &why));
  EXPECT_EQ(why, "summary.json is nested deeper than 64 levels");
}

TEST_F(RunHistoryDir, KeysARunByItsAbsolutePathAndKeepsTheSummarysCost) {
  Write("summary.json", R"({"duration_s": 60, "cost": {"gpu_hours": 0.5, "busy_ratio": 0.2}})");
  Write("meta.json", R"({"host": "h1", "name": "mine"})");
  fs::path cwd = fs::current_path();
  fs::current_path(dir_);
  std::string why;
  std::optional<RunRecord> r = ReadRunDir("./run/", CostRates{}, &why);
  fs::current_path(cwd);
  ASSERT_TRUE(r) << why;
  EXPECT_EQ(r->run_dir, fs::canonical(dir_ / "run").string());
  EXPECT_EQ(r->name, "mine");
  EXPECT_EQ(r->host, "h1");
  EXPECT_EQ(r->gpu_hours, 0.5);
  EXPECT_EQ(r->busy_ratio, 0.2);
}

TEST_F(RunHistoryDir, AFinishedRunThatCannotBeIndexedSaysSoInOneLine) {
  std::string db = (dir_ / "runs.db").string();
  std::ofstream(db) << std::string(2048, 'x');
  ::testing::internal::CaptureStderr();
  RunSummary summary;
  summary.outcome.duration_s = 1;
  IndexFinishedRun(db, (dir_ / "run").string(), summary, MetaRecord(), CostRates{});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            fmt::format("trainvitals: run history: {}: file is not a database; this run is not "
                        "indexed\n",
                        db));
}

TEST_F(RunHistoryDir, AFinishedRunIsIndexed) {
  std::string db = (dir_ / "runs.db").string();
  auto meta = nlohmann::ordered_json::parse(
      R"({"host": "h1", "name": "mine", "command": ["sleep", "1"],
          "gpus": [{"index": 0, "name": "NVIDIA H100"}]})");
  auto summary = nlohmann::ordered_json::parse(R"({"duration_s": 3600, "exit_code": 0,
      "gpus": [{"index": 0, "util_ratio": {"mean": 0.25, "max": 1}}]})");
  ::testing::internal::CaptureStderr();
  IndexFinishedRun(db, (dir_ / "run").string(), SummaryOfJson(summary), MetaFromJson(meta),
                   CostRates{});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  std::string error;
  auto index = RunIndex::Open(db, &error);
  ASSERT_NE(index, nullptr) << error;
  std::vector<RunRecord> runs;
  ASSERT_TRUE(index->Query({}, &runs, &error)) << error;
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].name, "mine");
  EXPECT_EQ(runs[0].command, "sleep 1");
  EXPECT_EQ(runs[0].exit_code, 0);
  EXPECT_EQ(runs[0].gpu_models, "NVIDIA H100");
  // A summary without "cost" (from before cost accounting) is costed.
  ASSERT_TRUE(runs[0].gpu_hours.has_value());
  EXPECT_DOUBLE_EQ(*runs[0].gpu_hours, 1);
  EXPECT_DOUBLE_EQ(*runs[0].busy_ratio, 0.25);
  EXPECT_DOUBLE_EQ(*runs[0].wasted_gpu_hours, 0.75);
}

// The history opened aside while a job runs is the one its end indexes into,
// on the history's own thread, done when it is destroyed; one removed since is
// opened again at the end, and so is one never opened.
TEST_F(RunHistoryDir, TheHistoryOpenedAsideIsIndexedIntoUnlessItMoved) {
  std::string db = (dir_ / "runs.db").string();
  auto meta = MetaFromJson(nlohmann::ordered_json::parse(R"({"host": "h1", "name": "aside"})"));
  RunSummary summary = SummaryOfJson(nlohmann::ordered_json::parse(R"({"duration_s": 5})"));
  auto count = [&] {
    std::string error;
    auto index = RunIndex::Open(db, &error);
    return index ? index->Count(&error).value_or(-1) : -1;
  };
  auto finished = [&](const char* name) {
    return HistoryAside::FinishedRun{(dir_ / name).string(), summary, meta, CostRates{}};
  };
  EXPECT_FALSE(HistoryAside::Applies("postgresql://db.example/runs"));
  ASSERT_TRUE(HistoryAside::Applies(db));

  {
    HistoryAside aside(db);
    aside.Start();
    aside.Index(finished("run1"));
  }
  EXPECT_EQ(count(), 1);

  // Never handed a run (its summary.json could not be written): nothing.
  {
    HistoryAside aside(db);
    aside.Start();
  }
  EXPECT_EQ(count(), 1);

  // Removed while the job ran: not written into the file that is gone.
  {
    HistoryAside removed(db);
    removed.Open();
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db + suffix);
    removed.Index(finished("run2"));
  }
  EXPECT_EQ(count(), 1);

  // Never opened aside: opened at the end.
  {
    HistoryAside late(db);
    late.Index(finished("run3"));
  }
  EXPECT_EQ(count(), 2);
}

TEST_F(RunHistoryDir, ARunOfAJobIsFoundByTheJobsId) {
  // As `run` writes it (run/run_meta.h): the job it derived, with this
  // node's rank; `trainvitals runs --job ID` asks for exactly this.
  std::string db = (dir_ / "runs.db").string();
  Config config;
  config.job_id = "node0:29500@2026-11-30T14:05Z";
  LiveIdentity run{1,          2, "run", "train", {"torchrun", "train.py"}, (dir_ / "run").string(),
                   1796047509, 1};
  MetaRecord meta = RunMeta(run, config, LoadJudging(config), {}, {}, "");
  RunSummary summary;
  summary.outcome.duration_s = 60;
  ::testing::internal::CaptureStderr();
  IndexFinishedRun(db, (dir_ / "run").string(), summary, meta, CostRates{});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  std::string error;
  auto index = RunIndex::Open(db, &error);
  ASSERT_NE(index, nullptr) << error;
  std::vector<RunRecord> runs;
  RunQuery q;
  q.job = "node0:29500@2026-11-30T14:05Z";
  ASSERT_TRUE(index->Query(q, &runs, &error)) << error;
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].name, "train");
  EXPECT_EQ(runs[0].job_kind, "given");
  q.job = "node0:29500";
  ASSERT_TRUE(index->Query(q, &runs, &error)) << error;
  EXPECT_TRUE(runs.empty()) << "the whole id, not a part of it";
}

TEST(RunIndexPath, FollowsXdgDataHomeThenHome) {
  EXPECT_EQ(RunIndexPath("/given.db"), "/given.db");
  const char* xdg = std::getenv("XDG_DATA_HOME");
  std::string saved_xdg = xdg ? xdg : "";
  ::setenv("XDG_DATA_HOME", "/data", 1);
  EXPECT_EQ(RunIndexPath(""), "/data/trainvitals/runs.db");
  ::unsetenv("XDG_DATA_HOME");
  EXPECT_EQ(RunIndexPath(""),
            std::string(std::getenv("HOME")) + "/.local/share/trainvitals/runs.db");
  if (xdg) ::setenv("XDG_DATA_HOME", saved_xdg.c_str(), 1);
}

}  // namespace
}  // namespace tv::run_history_test

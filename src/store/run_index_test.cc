#include "store/run_index.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace tv::run_index_test {
namespace {

namespace fs = std::filesystem;

class RunIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("tv-runindex-{}-{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Db() const { return (dir_ / "sub" / "runs.db").string(); }
  std::unique_ptr<RunIndex> OpenOk() {
    std::string error;
    auto index = RunIndex::Open(Db(), &error);
    EXPECT_NE(index, nullptr) << error;
    return index;
  }
  // A run directory that exists (unless `exists` is false).
  RunRecord Run(const std::string& name, double start_t, bool exists = true) {
    RunRecord r;
    r.run_dir = (dir_ / name).string();
    if (exists) fs::create_directories(r.run_dir);
    r.name = name;
    r.command_json = fmt::format(R"(["python","{}.py"])", name);
    r.command = fmt::format("python {}.py", name);
    r.host = "node1";
    r.start_t = start_t;
    r.duration_s = 100;
    r.exit_code = 0;
    return r;
  }
  std::vector<std::string> Names(RunIndex& index, const RunQuery& q) {
    std::vector<RunRecord> runs;
    std::string error;
    EXPECT_TRUE(index.Query(q, &runs, &error)) << error;
    std::vector<std::string> out;
    out.reserve(runs.size());
    for (const RunRecord& r : runs) out.push_back(r.name);
    return out;
  }
  static int UserVersion(const std::string& path) {
    sqlite3* db = nullptr;
    sqlite3_open(path.c_str(), &db);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, nullptr);
    int v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
  }
  fs::path dir_;
};

TEST_F(RunIndexTest, CreatesTheSchemaAtTheCurrentVersionInWalMode) {
  auto index = OpenOk();
  ASSERT_NE(index, nullptr);
  std::string error;
  EXPECT_EQ(index->Count(&error), 0);
  index.reset();
  EXPECT_EQ(UserVersion(Db()), RunIndex::kSchemaVersion);
  // WAL mode is a property of the file: it survives closing.
  std::ifstream header(Db(), std::ios::binary);
  char bytes[20] = {};
  header.read(bytes, sizeof(bytes));
  EXPECT_EQ(bytes[18], 2) << "file format write version 2 means WAL";
  EXPECT_EQ(bytes[19], 2) << "file format read version 2 means WAL";
}

TEST_F(RunIndexTest, ALogOverItsLimitIsCheckpointedAtTheNextOpen) {
  auto log_bytes = [&] { return fs::file_size(Db() + "-wal"); };
  auto index = OpenOk();
  ASSERT_NE(index, nullptr);
  std::string error;
  int n = 0;
  while (log_bytes() <= static_cast<uintmax_t>(RunIndex::kCheckpointLogBytes)) {
    ASSERT_TRUE(index->Put(Run(fmt::format("r{}", n), 1000 + n), &error)) << error;
    ASSERT_LT(++n, 1000);
  }
  index.reset();
  // No checkpoint at close: the runs are in the log only.
  uintmax_t before = fs::file_size(Db());
  index = OpenOk();
  ASSERT_NE(index, nullptr);
  EXPECT_GT(fs::file_size(Db()), before) << "the log's pages copied into the database";
  ASSERT_TRUE(index->Put(Run("after", 5000), &error)) << error;
  index.reset();
  // That writer cut the log's file back, so the next open checkpoints nothing.
  EXPECT_LE(log_bytes(), static_cast<uintmax_t>(RunIndex::kCheckpointLogBytes));
  auto db_written = fs::last_write_time(Db());
  before = fs::file_size(Db());
  OpenOk().reset();
  EXPECT_EQ(fs::last_write_time(Db()), db_written);
  EXPECT_EQ(fs::file_size(Db()), before);
  // The next writer began the log again: the one after reads a few frames back.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(Db().c_str(), &db), SQLITE_OK);
  int log_frames = -1;
  int checkpointed = -1;
  ASSERT_EQ(
      sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log_frames, &checkpointed),
      SQLITE_OK);
  sqlite3_close(db);
  EXPECT_LT(log_frames, 10);
  index = OpenOk();
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->Count(&error), n + 1);
}

TEST_F(RunIndexTest, MigratesAVersionOneDatabaseKeepingItsRuns) {
  fs::create_directories(fs::path(Db()).parent_path());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(Db().c_str(), &db), SQLITE_OK);
  std::string error;
  ASSERT_TRUE(MigrateTo1(db, &error)) << error;
  ASSERT_TRUE(ExecSql(db,
                      "PRAGMA user_version = 1;"
                      "INSERT INTO runs (run_dir, name, command_json, command, host, start_t,"
                      " gpu_count, gpu_models, indexed_t) VALUES ('/old/run', 'old', '[\"x\"]',"
                      " 'x', 'h', 1000, 2, 'NVIDIA A100', 1000);"
                      "INSERT INTO runs_findings VALUES (1, 'input-bound', 'warning');",
                      &error))
      << error;
  sqlite3_close(db);

  auto index = OpenOk();
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(UserVersion(Db()), RunIndex::kSchemaVersion);
  RunQuery q;
  q.with_findings = true;
  std::vector<RunRecord> runs;
  ASSERT_TRUE(index->Query(q, &runs, &error)) << error;
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].run_dir, "/old/run");
  EXPECT_EQ(runs[0].gpu_count, 2);
  EXPECT_EQ(runs[0].gpu_models, "NVIDIA A100");
  EXPECT_FALSE(runs[0].gpu_hours.has_value()) << "the cost columns came with version 2";
  EXPECT_TRUE(runs[0].missing);
  ASSERT_EQ(runs[0].findings.size(), 1u);
  EXPECT_EQ(runs[0].findings[0].id, "input-bound");
  // And the new columns take values.
  RunRecord r = Run("new", 2000);
  r.gpu_hours = 1.5;
  ASSERT_TRUE(index->Put(r, &error)) << error;
  ASSERT_TRUE(index->Query(q, &runs, &error)) << error;
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].gpu_hours, 1.5);
}

TEST_F(RunIndexTest, MigratesAVersionThreeDatabaseWithItsJobsUnknown) {
  fs::create_directories(fs::path(Db()).parent_path());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(Db().c_str(), &db), SQLITE_OK);
  std::string error;
  for (auto step : {MigrateTo1, MigrateTo2, MigrateTo3}) ASSERT_TRUE(step(db, &error)) << error;
  ASSERT_TRUE(ExecSql(db,
                      "PRAGMA user_version = 3;"
                      "INSERT INTO runs (run_dir, name, command_json, command, host, start_t,"
                      " gpu_count, gpu_models, indexed_t) VALUES ('/old/run', 'old',"
                      " '[\"x\"]', 'x', 'h', 1000, 1, '', 1000);",
                      &error))
      << error;
  sqlite3_close(db);

  auto index = OpenOk();
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(UserVersion(Db()), RunIndex::kSchemaVersion);
  RunRecord r = Run("slurm-job", 2000);
  r.user = "alice";
  r.job = "4242";
  r.job_kind = "slurm";
  r.account = "vision";
  r.partition = "gpu";
  r.namespace_name = "ml";
  ASSERT_TRUE(index->Put(r, &error)) << error;
  std::vector<RunRecord> runs;
  ASSERT_TRUE(index->Query(RunQuery(), &runs, &error)) << error;
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].user, "") << "the column came with version 4";
  EXPECT_EQ(runs[0].user, "alice");
  EXPECT_EQ(runs[0].job, "4242");
  EXPECT_EQ(runs[0].job_kind, "slurm");
  EXPECT_EQ(runs[0].account, "vision");
  EXPECT_EQ(runs[0].partition, "gpu");
  EXPECT_EQ(runs[0].namespace_name, "ml");
  RunQuery by_user;
  by_user.user = "alice";
  EXPECT_EQ(Names(*index, by_user), std::vector<std::string>{"slurm-job"});
  RunQuery by_job;
  by_job.job = "4243";
  EXPECT_TRUE(Names(*index, by_job).empty());
  by_job.job = "4242";
  EXPECT_EQ(Names(*index, by_job), std::vector<std::string>{"slurm-job"});
}

TEST_F(RunIndexTest, MigratesAVersionTwoDatabaseWithGpuEnergyUnknown) {
  fs::create_directories(fs::path(Db()).parent_path());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(Db().c_str(), &db), SQLITE_OK);
  std::string error;
  ASSERT_TRUE(MigrateTo1(db, &error)) << error;
  ASSERT_TRUE(MigrateTo2(db, &error)) << error;
  ASSERT_TRUE(ExecSql(db,
                      "PRAGMA user_version = 2;"
                      "INSERT INTO runs (run_dir, name, command_json, command, host, start_t,"
                      " gpu_count, gpu_models, energy_kwh, indexed_t) VALUES ('/old/run', 'old',"
                      " '[\"x\"]', 'x', 'h', 1000, 1, 'NVIDIA A100', 0.5, 1000);",
                      &error))
      << error;
  sqlite3_close(db);

  auto index = OpenOk();
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(UserVersion(Db()), RunIndex::kSchemaVersion);
  std::vector<RunRecord> runs;
  ASSERT_TRUE(index->Query(RunQuery(), &runs, &error)) << error;
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].energy_kwh, 0.5);
  EXPECT_FALSE(runs[0].gpu_energy_kwh.has_value()) << "the column came with version 3";
  RunRecord r = Run("new", 2000);
  r.gpu_energy_kwh = 0.25;
  ASSERT_TRUE(index->Put(r, &error)) << error;
  ASSERT_TRUE(index->Query(RunQuery(), &runs, &error)) << error;
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].gpu_energy_kwh, 0.25);
}

TEST_F(RunIndexTest, RefusesADatabaseFromANewerVersion) {
  fs::create_directories(fs::path(Db()).parent_path());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(Db().c_str(), &db), SQLITE_OK);
  std::string error;
  ASSERT_TRUE(ExecSql(db, "PRAGMA user_version = 99", &error)) << error;
  sqlite3_close(db);
  EXPECT_EQ(RunIndex::Open(Db(), &error), nullptr);
  EXPECT_EQ(error, fmt::format("written by a newer trainvitals (schema 99; this one knows {})",
                               RunIndex::kSchemaVersion));
}

TEST_F(RunIndexTest, ACorruptFileIsAClearErrorAndStaysUntouched) {
  fs::create_directories(fs::path(Db()).parent_path());
  std::string garbage(4096, '\x5a');
  { std::ofstream(Db(), std::ios::binary) << garbage; }
  std::string error;
  EXPECT_EQ(RunIndex::Open(Db(), &error), nullptr);
  EXPECT_EQ(error, "file is not a database");
  std::ifstream in(Db(), std::ios::binary);
  std::string after((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, garbage);
}

TEST_F(RunIndexTest, PutReplacesTheRowOfTheSameRunDirectoryWithItsFindings) {
  auto index = OpenOk();
  RunRecord r = Run("a", 1000);
  r.findings = {{"input-bound", "warning"}, {"gpu-idle", "critical"}};
  std::string error;
  ASSERT_TRUE(index->Put(r, &error)) << error;
  r.exit_code = 3;
  r.findings = {{"memory-leak", "warning"}};
  ASSERT_TRUE(index->Put(r, &error)) << error;
  EXPECT_EQ(index->Count(&error), 1);
  RunQuery q;
  q.with_findings = true;
  std::vector<RunRecord> runs;
  ASSERT_TRUE(index->Query(q, &runs, &error)) << error;
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].exit_code, 3);
  ASSERT_EQ(runs[0].findings.size(), 1u);
  EXPECT_EQ(runs[0].findings[0].id, "memory-leak");
  EXPECT_FALSE(runs[0].missing);
}

// Put's statements compiled ahead (a run's history, opened while the job
// runs) write as any, again and again, and hold nothing between the Puts: a
// checkpoint of the whole log by another connection is not kept waiting.
TEST_F(RunIndexTest, APutPreparedAheadWritesAsAnyAndHoldsNothingAfter) {
  auto index = OpenOk();
  std::string error;
  ASSERT_TRUE(index->PreparePut(&error)) << error;
  RunRecord a = Run("a", 1000);
  a.findings = {{"input-bound", "warning"}};
  ASSERT_TRUE(index->Put(a, &error)) << error;
  ASSERT_TRUE(index->Put(Run("b", 2000), &error)) << error;
  a.exit_code = 3;
  a.findings = {{"memory-leak", "warning"}, {"gpu-idle", "critical"}};
  ASSERT_TRUE(index->Put(a, &error)) << error;

  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(Db().c_str(), &other), SQLITE_OK);
  EXPECT_EQ(sqlite3_wal_checkpoint_v2(other, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(other);
  sqlite3_close(other);

  RunQuery q;
  q.with_findings = true;
  q.sort = "start";
  std::vector<RunRecord> runs;
  ASSERT_TRUE(index->Query(q, &runs, &error)) << error;
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].name, "b");
  EXPECT_EQ(runs[0].exit_code, 0);
  EXPECT_TRUE(runs[0].findings.empty());
  EXPECT_EQ(runs[1].name, "a");
  EXPECT_EQ(runs[1].exit_code, 3);
  ASSERT_EQ(runs[1].findings.size(), 2u);
}

TEST_F(RunIndexTest, FiltersBySinceNameHostAndCommandText) {
  auto index = OpenOk();
  std::string error;
  RunRecord a = Run("train-a", 1000), b = Run("train-b", 2000), c = Run("eval", 3000);
  b.host = "node2";
  c.command = "python eval.py --fast";
  for (const RunRecord& r : {a, b, c}) ASSERT_TRUE(index->Put(r, &error)) << error;
  using V = std::vector<std::string>;
  EXPECT_EQ(Names(*index, {}), (V{"eval", "train-b", "train-a"})) << "newest first";
  RunQuery q;
  q.since_t = 2000;
  EXPECT_EQ(Names(*index, q), (V{"eval", "train-b"}));
  q = {};
  q.name_glob = "train*";
  EXPECT_EQ(Names(*index, q), (V{"train-b", "train-a"}));
  q.host = "node1";
  EXPECT_EQ(Names(*index, q), (V{"train-a"}));
  q = {};
  q.command_text = "--fast";
  EXPECT_EQ(Names(*index, q), (V{"eval"}));
  q = {};
  q.limit = 2;
  EXPECT_EQ(Names(*index, q), (V{"eval", "train-b"}));
  q = {};
  q.name_glob = "nothing*";
  EXPECT_EQ(Names(*index, q), V{});
}

TEST_F(RunIndexTest, SortsByEachKeyWithUnknownValuesLast) {
  auto index = OpenOk();
  std::string error;
  RunRecord a = Run("a", 1000), b = Run("b", 2000), c = Run("c", 3000);
  a.wasted_gpu_hours = 5, b.wasted_gpu_hours = 9;  // c unknown
  a.busy_ratio = 0.8, b.busy_ratio = 0.2, c.busy_ratio = 0.5;
  a.duration_s = 50, b.duration_s = 10, c.duration_s = 300;
  a.health_score = 90, c.health_score = 40;
  for (const RunRecord& r : {a, b, c}) ASSERT_TRUE(index->Put(r, &error)) << error;
  using V = std::vector<std::string>;
  auto sorted = [&](const char* key) {
    RunQuery q;
    q.sort = key;
    return Names(*index, q);
  };
  EXPECT_EQ(sorted("start"), (V{"c", "b", "a"}));
  EXPECT_EQ(sorted("wasted_gpu_hours"), (V{"b", "a", "c"}));
  EXPECT_EQ(sorted("busy_ratio"), (V{"b", "c", "a"})) << "the least busy first";
  EXPECT_EQ(sorted("duration"), (V{"c", "a", "b"}));
  EXPECT_EQ(sorted("health"), (V{"c", "a", "b"})) << "the least healthy first, unknown last";
  EXPECT_EQ(sorted("name"), (V{"a", "b", "c"}));
  for (const RunSortKey& k : RunSortKeys()) EXPECT_EQ(sorted(k.key).size(), 3u) << k.key;
  RunQuery q;
  q.sort = "bogus";
  std::vector<RunRecord> runs;
  EXPECT_FALSE(index->Query(q, &runs, &error));
  EXPECT_EQ(error, "unknown sort key 'bogus'");
}

TEST_F(RunIndexTest, AStatsQueryReadsWhatTheStatsAddUp) {
  auto index = OpenOk();
  std::string error;
  RunRecord r = Run("a", 1000);
  r.gpu_hours = 2, r.busy_gpu_hours = 1, r.wasted_gpu_hours = 1, r.busy_ratio = 0.5;
  r.money = 3, r.currency = "EUR", r.user = "alice", r.job = "42", r.steps = 7;
  r.findings = {{"gpu-idle", "warning"}};
  ASSERT_TRUE(index->Put(r, &error)) << error;
  RunQuery q;
  q.stats_only = q.with_findings = true;
  q.sort.clear();
  std::vector<RunRecord> runs;
  ASSERT_TRUE(index->Query(q, &runs, &error)) << error;
  ASSERT_EQ(runs.size(), 1u);
  const RunRecord& got = runs[0];
  EXPECT_EQ(got.run_dir, r.run_dir);
  EXPECT_EQ(got.duration_s, 100);
  EXPECT_EQ(got.gpu_hours, 2);
  EXPECT_EQ(got.wasted_gpu_hours, 1);
  EXPECT_EQ(got.money, 3);
  EXPECT_EQ(got.currency, "EUR");
  EXPECT_EQ(got.user, "alice");
  EXPECT_EQ(got.job, "42");
  ASSERT_EQ(got.findings.size(), 1u);
  EXPECT_EQ(got.findings[0].id, "gpu-idle");
  EXPECT_EQ(got.command, "") << "not read for the stats";
  EXPECT_FALSE(got.steps.has_value());
}

TEST_F(RunIndexTest, MarksRunsWhoseDirectoryIsGone) {
  auto index = OpenOk();
  std::string error;
  ASSERT_TRUE(index->Put(Run("here", 1000), &error)) << error;
  ASSERT_TRUE(index->Put(Run("gone", 2000, /*exists=*/false), &error)) << error;
  std::vector<RunRecord> runs;
  ASSERT_TRUE(index->Query({}, &runs, &error)) << error;
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].name, "gone");
  EXPECT_TRUE(runs[0].missing);
  EXPECT_FALSE(runs[1].missing);
}

mode_t ModeOf(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// The history holds command lines: only its owner reads it.
TEST_F(RunIndexTest, ANewHistoryIsPrivate) {
  auto index = OpenOk();
  std::string error;
  ASSERT_TRUE(index->Put(Run("a", 100), &error)) << error;
  EXPECT_EQ(ModeOf(dir_ / "sub"), 0700u);
  EXPECT_EQ(ModeOf(Db()), 0600u);
  ASSERT_TRUE(fs::exists(Db() + "-wal"));
  EXPECT_EQ(ModeOf(Db() + "-wal"), 0600u);
  EXPECT_EQ(ModeOf(Db() + "-shm"), 0600u);
}

// One an earlier version made readable by all, in the default place, is made
// private when it is opened; a file given elsewhere keeps its mode.
TEST_F(RunIndexTest, TheDefaultHistoryMadeBeforeIsMadePrivate) {
  const char* old = std::getenv("XDG_DATA_HOME");
  std::string saved = old != nullptr ? old : "";
  ::setenv("XDG_DATA_HOME", dir_.c_str(), 1);
  std::string path = DefaultRunIndexPath();
  fs::create_directories(dir_ / "trainvitals");
  std::ofstream(path).close();
  fs::permissions(dir_ / "trainvitals", fs::perms(0755));
  fs::permissions(path, fs::perms(0644));
  std::string error;
  ::setenv("XDG_DATA_HOME", (dir_ / "elsewhere").c_str(), 1);
  bool given_opened = RunIndex::Open(path, &error) != nullptr;  // not the default place now
  mode_t given_mode = ModeOf(path);
  ::setenv("XDG_DATA_HOME", dir_.c_str(), 1);
  bool default_opened = RunIndex::Open(path, &error) != nullptr;
  if (old != nullptr) {
    ::setenv("XDG_DATA_HOME", saved.c_str(), 1);
  } else {
    ::unsetenv("XDG_DATA_HOME");
  }
  ASSERT_TRUE(given_opened && default_opened) << error;
  EXPECT_EQ(given_mode, 0644u);  // a given file keeps its mode
  EXPECT_EQ(ModeOf(dir_ / "trainvitals"), 0700u);
  EXPECT_EQ(ModeOf(path), 0600u);
}

TEST_F(RunIndexTest, ADirectoryThatCannotBeMadeIsAClearError) {
  std::ofstream(dir_ / "file") << "x";  // a file where its directory would go
  std::string error;
  EXPECT_EQ(RunIndex::Open((dir_ / "file" / "sub" / "runs.db").string(), &error), nullptr);
  EXPECT_EQ(error, fmt::format("cannot make its directory: {}: Not a directory",
                               (dir_ / "file").string()));
}

}  // namespace
}  // namespace tv::run_index_test

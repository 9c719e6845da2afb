#include "store/run_index.h"

#include <fmt/format.h>
#include <pwd.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>

#include "core/private_path.h"
#include "store/db_location.h"
#include "store/run_index_pg.h"

namespace tv {
namespace {

// A prepared statement, finalized on every way out.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, std::string* error) {
    if (sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
        SQLITE_OK) {
      *error = sqlite3_errmsg(db);
      stmt_ = nullptr;
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  sqlite3_stmt* get() const { return stmt_; }

  // Binds parameter `n` (1-based).
  void Bind(int n, const SqlValue& v) {
    if (const auto* text = std::get_if<std::string>(&v)) {
      sqlite3_bind_text(stmt_, n, text->data(), static_cast<int>(text->size()), SQLITE_TRANSIENT);
    } else if (const auto* real = std::get_if<double>(&v)) {
      sqlite3_bind_double(stmt_, n, *real);
    } else if (const auto* integer = std::get_if<int64_t>(&v)) {
      sqlite3_bind_int64(stmt_, n, *integer);
    } else {
      sqlite3_bind_null(stmt_, n);
    }
  }
  // SQLITE_ROW, SQLITE_DONE, or an error code.
  int Step() { return sqlite3_step(stmt_); }
  // Ready to run again, its parameters unbound.
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  std::string Text(int col) const {
    const unsigned char* t = sqlite3_column_text(stmt_, col);
    return t != nullptr ? std::string(reinterpret_cast<const char*>(t)) : std::string();
  }
  std::optional<double> Real(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(stmt_, col);
  }
  std::optional<int64_t> Int(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_int64(stmt_, col);
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// A Statement's current row, as the shared code reads it.
class SqliteRow : public SqlRow {
 public:
  explicit SqliteRow(const Statement& s) : s_(s) {}
  std::string Text(int col) const override { return s_.Text(col); }
  std::optional<double> Real(int col) const override { return s_.Real(col); }
  std::optional<int64_t> Int(int col) const override { return s_.Int(col); }

 private:
  const Statement& s_;
};

std::optional<int> UserVersion(sqlite3* db, std::string* error) {
  Statement s(db, "PRAGMA user_version", error);
  if (!s.ok()) return std::nullopt;
  if (s.Step() != SQLITE_ROW) {
    *error = sqlite3_errmsg(db);
    return std::nullopt;
  }
  return static_cast<int>(*s.Int(0));
}

using MigrationStep = bool (*)(sqlite3*, std::string*);
constexpr MigrationStep kMigrations[] = {MigrateTo1, MigrateTo2, MigrateTo3, MigrateTo4};
static_assert(std::size(kMigrations) == RunIndex::kSchemaVersion);

// The SQLite backend.
class SqliteRunIndex : public RunIndex {
 public:
  explicit SqliteRunIndex(sqlite3* db) : RunIndex(SqlDialect::kSqlite), db_(db) {}
  ~SqliteRunIndex() override {
    prepared_.clear();
    sqlite3_close_v2(db_);
  }

  bool Migrate(std::string* error);
  bool Moved() override {
    int moved = 0;
    return sqlite3_file_control(db_, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK &&
           moved != 0;
  }

 protected:
  bool Exec(const std::string& sql, const std::vector<SqlValue>& params, const RowFn& row,
            std::string* error) override {
    if (auto it = prepared_.find(sql); it != prepared_.end()) {
      Statement& s = *it->second;
      bool ok = Run(s, params, row, error);
      s.Reset();  // holds no read transaction until its next run
      return ok;
    }
    Statement s(db_, sql, error);
    return s.ok() && Run(s, params, row, error);
  }

  bool Prepare(const std::string& sql, std::string* error) override {
    auto s = std::make_unique<Statement>(db_, sql, error);
    if (!s->ok()) return false;
    prepared_[sql] = std::move(s);
    return true;
  }

 private:
  bool Run(Statement& s, const std::vector<SqlValue>& params, const RowFn& row,
           std::string* error) {
    for (size_t i = 0; i < params.size(); ++i) s.Bind(static_cast<int>(i) + 1, params[i]);
    SqliteRow view(s);
    int rc;
    while ((rc = s.Step()) == SQLITE_ROW) {
      if (row) row(view);
    }
    if (rc != SQLITE_DONE) return *error = sqlite3_errmsg(db_), false;
    return true;
  }

  sqlite3* db_;
  std::map<std::string, std::unique_ptr<Statement>> prepared_;  // by their SQL
};

}  // namespace

bool ExecSql(sqlite3* db, const char* sql, std::string* error) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK) return true;
  *error = message != nullptr ? message : sqlite3_errmsg(db);
  sqlite3_free(message);
  return false;
}

// A statement of the open that may meet SQLITE_BUSY without the busy handler
// being asked (connections setting WAL on a new file at once, each holding
// the shared lock the other waits on): tried again until the busy timeout has
// passed.
bool ExecWhileBusy(sqlite3* db, const char* sql, std::string* error) {
  auto until =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(RunIndex::kBusyTimeoutMs);
  while (!ExecSql(db, sql, error)) {
    if ((sqlite3_errcode(db) & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() >= until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

bool MigrateTo1(sqlite3* db, std::string* error) {
  return ExecSql(db,
                 "CREATE TABLE runs ("
                 " id INTEGER PRIMARY KEY,"
                 " run_dir TEXT NOT NULL UNIQUE,"
                 " name TEXT NOT NULL, command_json TEXT NOT NULL, command TEXT NOT NULL,"
                 " host TEXT NOT NULL, start_t REAL, end_t REAL, duration_s REAL,"
                 " exit_code INTEGER, signal INTEGER, gpu_count INTEGER NOT NULL,"
                 " gpu_models TEXT NOT NULL, gpu_util_ratio_mean REAL,"
                 " gpu_memory_bytes_max REAL, job_memory_bytes_max REAL, steps INTEGER,"
                 " epochs INTEGER, health_score REAL, indexed_t REAL NOT NULL);"
                 "CREATE INDEX runs_by_start ON runs(start_t);"
                 "CREATE TABLE runs_findings ("
                 " run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
                 " id TEXT NOT NULL, severity TEXT NOT NULL);"
                 "CREATE INDEX runs_findings_by_run ON runs_findings(run_id);",
                 error);
}

// Cost accounting (summary.json "cost", src/analysis/cost.h).
bool MigrateTo2(sqlite3* db, std::string* error) {
  return ExecSql(db,
                 "ALTER TABLE runs ADD COLUMN gpu_hours REAL;"
                 "ALTER TABLE runs ADD COLUMN busy_gpu_hours REAL;"
                 "ALTER TABLE runs ADD COLUMN wasted_gpu_hours REAL;"
                 "ALTER TABLE runs ADD COLUMN busy_ratio REAL;"
                 "ALTER TABLE runs ADD COLUMN energy_kwh REAL;"
                 "ALTER TABLE runs ADD COLUMN co2e_kg REAL;"
                 "ALTER TABLE runs ADD COLUMN money REAL;"
                 "ALTER TABLE runs ADD COLUMN currency TEXT NOT NULL DEFAULT '';",
                 error);
}

// The GPUs' own energy (summary.json cost.gpu_energy_kwh); rows indexed
// before keep it unknown until `runs import` reads their run again.
bool MigrateTo3(sqlite3* db, std::string* error) {
  return ExecSql(db, "ALTER TABLE runs ADD COLUMN gpu_energy_kwh REAL;", error);
}

// Whose run it is and which scheduler job (meta.json "user" and "job"): what
// `runs stats --by` groups by. Rows indexed before know none of it until
// `runs import` reads their run again.
bool MigrateTo4(sqlite3* db, std::string* error) {
  return ExecSql(db,
                 "ALTER TABLE runs ADD COLUMN user_name TEXT NOT NULL DEFAULT '';"
                 "ALTER TABLE runs ADD COLUMN job_id TEXT NOT NULL DEFAULT '';"
                 "ALTER TABLE runs ADD COLUMN job_kind TEXT NOT NULL DEFAULT '';"
                 "ALTER TABLE runs ADD COLUMN account TEXT NOT NULL DEFAULT '';"
                 "ALTER TABLE runs ADD COLUMN partition_name TEXT NOT NULL DEFAULT '';"
                 "ALTER TABLE runs ADD COLUMN namespace_name TEXT NOT NULL DEFAULT '';"
                 "CREATE INDEX runs_by_job ON runs(job_id);",
                 error);
}

std::string DefaultRunIndexPath() {
  const char* xdg = std::getenv("XDG_DATA_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/trainvitals/runs.db";
  const char* home = std::getenv("HOME");
  if (home == nullptr || home[0] == '\0') {
    const passwd* pw = ::getpwuid(::getuid());  // a service or cron job without HOME
    home = pw != nullptr ? pw->pw_dir : nullptr;
  }
  if (home == nullptr || home[0] == '\0') return {};
  return std::string(home) + "/.local/share/trainvitals/runs.db";
}

const std::vector<RunSortKey>& RunSortKeys() {
  static const std::vector<RunSortKey> keys = {
      {"start", "start_t", true},
      {"name", "name", false},
      {"duration", "duration_s", true},
      {"gpus", "gpu_count", true},
      {"gpu_hours", "gpu_hours", true},
      {"wasted_gpu_hours", "wasted_gpu_hours", true},
      {"busy_ratio", "busy_ratio", false},
      {"energy_kwh", "energy_kwh", true},
      {"money", "money", true},
      {"health", "health_score", false},
      {"exit", "exit_code", true},
  };
  return keys;
}

const RunSortKey* FindRunSortKey(std::string_view key) {
  for (const RunSortKey& k : RunSortKeys()) {
    if (key == k.key) return &k;
  }
  return nullptr;
}

std::unique_ptr<RunIndex> RunIndex::Open(const std::string& location, std::string* error) {
  if (IsPostgresUrl(location)) return OpenPostgresRunIndex(location, error);
  const std::string& path = location;
  if (path.empty()) {
    *error = "no database path (no XDG_DATA_HOME, HOME or home directory; give --db FILE)";
    return nullptr;
  }
  // Private: the history holds command lines and working directories.
  // SQLite gives its -wal, -shm and -journal files the database's mode.
  bool default_place = path == DefaultRunIndexPath();
  std::string parent = std::filesystem::path(path).parent_path().string();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    if (Status s = MakeDirs(parent, 0700); !s.ok()) {
      *error = fmt::format("cannot make its directory: {}", s.message());
      return nullptr;
    }
  } else if (default_place && !parent.empty()) {
    (void)NarrowMode(parent, 0700);  // one an earlier trainvitals made 0755
  }
  bool created = false;
  (void)CreateFileIfAbsent(path, 0600, &created);  // else SQLite says why it cannot open it
  if (!created && default_place) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      (void)NarrowMode(path + suffix, 0600);
    }
  }
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  auto index = std::make_unique<SqliteRunIndex>(db);  // closes db on every way out
  if (rc != SQLITE_OK) {
    *error = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    return nullptr;
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // No checkpoint at close: the last connection to close would otherwise copy
  // the log into the database and sync both (a run's end waited up to a
  // quarter of a second for the disk here). The first connection reads the
  // whole log back instead (4 frames a run, a millisecond per 250), so the
  // log is checkpointed at an open that finds it over kCheckpointLogBytes:
  // `run` opens its history while the command runs. The writer that begins
  // the log again cuts its file back to that size (journal_size_limit), so
  // the file's size says how much it holds.
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  // WAL: readers and one writer at once. synchronous=NORMAL: a commit does
  // not wait for the disk; a power cut may lose the last runs, never the file.
  if (!ExecWhileBusy(db, "PRAGMA journal_mode=WAL", error) ||
      !ExecSql(db, "PRAGMA synchronous=NORMAL", error) ||
      !ExecSql(db, fmt::format("PRAGMA journal_size_limit={}", kCheckpointLogBytes).c_str(),
               error) ||
      !ExecSql(db, "PRAGMA foreign_keys=ON", error) || !index->Migrate(error)) {
    return nullptr;
  }
  struct stat log {};
  if (::stat((path + "-wal").c_str(), &log) == 0 && log.st_size > kCheckpointLogBytes) {
    // Passive: it copies what no reader still needs and waits for nobody;
    // the next commit then writes the log from its start again.
    sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  }
  return index;
}

bool SqliteRunIndex::Migrate(std::string* error) {
  std::optional<int> version = UserVersion(db_, error);
  if (!version) return false;
  if (*version == kSchemaVersion) return true;
  if (!ExecSql(db_, "BEGIN IMMEDIATE", error)) return false;
  auto done = [&](bool ok) {
    if (ok) ok = ExecSql(db_, "COMMIT", error);
    if (!ok) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return ok;
  };
  version = UserVersion(db_, error);  // another process may have migrated meanwhile
  if (!version) return done(false);
  if (*version > kSchemaVersion) {
    *error = NewerSchemaError(*version);
    return done(false);
  }
  for (int v = *version; v < kSchemaVersion; ++v) {
    if (!kMigrations[v](db_, error)) return done(false);
  }
  std::string set = fmt::format("PRAGMA user_version = {}", kSchemaVersion);
  return done(ExecSql(db_, set.c_str(), error));
}

}  // namespace tv

#include "store/run_index.h"

#include <fmt/format.h>
#include <pwd.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <unordered_map>

#include "core/private_path.h"

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

  // Binds parameters 1.. in order.
  void Bind(const std::string& v) {
    sqlite3_bind_text(stmt_, ++n_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void Bind(const std::optional<double>& v) {
    ++n_;
    v ? sqlite3_bind_double(stmt_, n_, *v) : sqlite3_bind_null(stmt_, n_);
  }
  void Bind(const std::optional<int64_t>& v) {
    ++n_;
    v ? sqlite3_bind_int64(stmt_, n_, *v) : sqlite3_bind_null(stmt_, n_);
  }
  void Bind(const std::optional<int>& v) { Bind(v ? std::optional<int64_t>(*v) : std::nullopt); }
  void Bind(int64_t v) { sqlite3_bind_int64(stmt_, ++n_, v); }
  // For another round of binds and steps.
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    n_ = 0;
  }

  // SQLITE_ROW, SQLITE_DONE, or an error code.
  int Step() { return sqlite3_step(stmt_); }

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
  int n_ = 0;
};

// Rolls back unless committed.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {}
  ~Transaction() {
    if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  bool Begin(std::string* error) { return open_ = ExecSql(db_, "BEGIN IMMEDIATE", error); }
  bool Commit(std::string* error) {
    if (!ExecSql(db_, "COMMIT", error)) return false;
    open_ = false;
    return true;
  }

 private:
  sqlite3* db_;
  bool open_ = false;
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

// The columns a query reads, in RunRecord order.
constexpr const char* kColumns =
    "id, run_dir, name, command_json, command, host, start_t, end_t, duration_s, exit_code, "
    "signal, gpu_count, gpu_models, gpu_util_ratio_mean, gpu_memory_bytes_max, "
    "job_memory_bytes_max, steps, epochs, health_score, gpu_hours, busy_gpu_hours, "
    "wasted_gpu_hours, busy_ratio, energy_kwh, co2e_kg, money, currency, gpu_energy_kwh, "
    "user_name, job_id, job_kind, account, partition_name, namespace_name";

RunRecord ReadRecord(const Statement& s) {
  RunRecord r;
  int c = 1;
  r.run_dir = s.Text(c++);
  r.name = s.Text(c++);
  r.command_json = s.Text(c++);
  r.command = s.Text(c++);
  r.host = s.Text(c++);
  r.start_t = s.Real(c++);
  r.end_t = s.Real(c++);
  r.duration_s = s.Real(c++);
  if (auto v = s.Int(c++)) r.exit_code = static_cast<int>(*v);
  if (auto v = s.Int(c++)) r.signal = static_cast<int>(*v);
  r.gpu_count = static_cast<int>(s.Int(c++).value_or(0));
  r.gpu_models = s.Text(c++);
  r.gpu_util_ratio_mean = s.Real(c++);
  r.gpu_memory_bytes_max = s.Real(c++);
  r.job_memory_bytes_max = s.Real(c++);
  r.steps = s.Int(c++);
  r.epochs = s.Int(c++);
  r.health_score = s.Real(c++);
  r.gpu_hours = s.Real(c++);
  r.busy_gpu_hours = s.Real(c++);
  r.wasted_gpu_hours = s.Real(c++);
  r.busy_ratio = s.Real(c++);
  r.energy_kwh = s.Real(c++);
  r.co2e_kg = s.Real(c++);
  r.money = s.Real(c++);
  r.currency = s.Text(c++);
  r.gpu_energy_kwh = s.Real(c++);
  for (std::string* text :
       {&r.user, &r.job, &r.job_kind, &r.account, &r.partition, &r.namespace_name}) {
    *text = s.Text(c++);
  }
  return r;
}

// " WHERE ..." for `q`, with its parameters bound by BindWhere in order.
std::string Where(const RunQuery& q) {
  std::string w;
  auto add = [&](const char* cond) { w += (w.empty() ? " WHERE " : " AND ") + std::string(cond); };
  if (q.since_t) add("r.start_t >= ?");
  if (!q.name_glob.empty()) add("r.name GLOB ?");
  if (!q.host.empty()) add("r.host = ?");
  if (!q.command_text.empty()) add("instr(r.command, ?) > 0");
  if (!q.user.empty()) add("r.user_name = ?");
  if (!q.job.empty()) add("r.job_id = ?");
  return w;
}

void BindWhere(const RunQuery& q, Statement& s) {
  if (q.since_t) s.Bind(q.since_t);
  if (!q.name_glob.empty()) s.Bind(q.name_glob);
  if (!q.host.empty()) s.Bind(q.host);
  if (!q.command_text.empty()) s.Bind(q.command_text);
  if (!q.user.empty()) s.Bind(q.user);
  if (!q.job.empty()) s.Bind(q.job);
}

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

std::unique_ptr<RunIndex> RunIndex::Open(const std::string& path, std::string* error) {
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
  std::unique_ptr<RunIndex> index(new RunIndex(db));  // closes db on every way out
  if (rc != SQLITE_OK) {
    *error = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    return nullptr;
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  // No checkpoint at close: the last connection to close would otherwise copy
  // the log into the database and sync both (a run's end waited up to a
  // quarter of a second for the disk here); the log is checkpointed once it
  // passes 1000 pages instead, and read by every connection until then.
  sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, nullptr);
  // WAL: readers and one writer at once. synchronous=NORMAL: a commit does
  // not wait for the disk; a power cut may lose the last runs, never the file.
  if (!ExecWhileBusy(db, "PRAGMA journal_mode=WAL", error) ||
      !ExecSql(db, "PRAGMA synchronous=NORMAL", error) ||
      !ExecSql(db, "PRAGMA foreign_keys=ON", error) || !index->Migrate(error)) {
    return nullptr;
  }
  return index;
}

RunIndex::~RunIndex() { sqlite3_close_v2(db_); }

bool RunIndex::Migrate(std::string* error) {
  std::optional<int> version = UserVersion(db_, error);
  if (!version) return false;
  if (*version == kSchemaVersion) return true;
  Transaction t(db_);
  if (!t.Begin(error)) return false;
  version = UserVersion(db_, error);  // another process may have migrated meanwhile
  if (!version) return false;
  if (*version > kSchemaVersion) {
    *error = fmt::format("written by a newer trainvitals (schema {}; this one knows {})", *version,
                         kSchemaVersion);
    return false;
  }
  for (int v = *version; v < kSchemaVersion; ++v) {
    if (!kMigrations[v](db_, error)) return false;
  }
  std::string set = fmt::format("PRAGMA user_version = {}", kSchemaVersion);
  return ExecSql(db_, set.c_str(), error) && t.Commit(error);
}

bool RunIndex::Put(const RunRecord& r, std::string* error) {
  Transaction t(db_);
  if (!t.Begin(error)) return false;
  {
    Statement del(db_, "DELETE FROM runs WHERE run_dir = ?", error);
    if (!del.ok()) return false;
    del.Bind(r.run_dir);
    if (del.Step() != SQLITE_DONE) return *error = sqlite3_errmsg(db_), false;
  }
  Statement ins(db_,
                "INSERT INTO runs (run_dir, name, command_json, command, host, start_t, end_t,"
                " duration_s, exit_code, signal, gpu_count, gpu_models, gpu_util_ratio_mean,"
                " gpu_memory_bytes_max, job_memory_bytes_max, steps, epochs, health_score,"
                " gpu_hours, busy_gpu_hours, wasted_gpu_hours, busy_ratio, energy_kwh, co2e_kg,"
                " money, currency, gpu_energy_kwh, user_name, job_id, job_kind, account,"
                " partition_name, namespace_name, indexed_t) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                "?, ?, ?, ?, ?, ?, ?,"
                " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                " (julianday('now') - 2440587.5) * 86400.0)",
                error);
  if (!ins.ok()) return false;
  ins.Bind(r.run_dir);
  ins.Bind(r.name);
  ins.Bind(r.command_json);
  ins.Bind(r.command);
  ins.Bind(r.host);
  ins.Bind(r.start_t);
  ins.Bind(r.end_t);
  ins.Bind(r.duration_s);
  ins.Bind(r.exit_code);
  ins.Bind(r.signal);
  ins.Bind(static_cast<int64_t>(r.gpu_count));
  ins.Bind(r.gpu_models);
  ins.Bind(r.gpu_util_ratio_mean);
  ins.Bind(r.gpu_memory_bytes_max);
  ins.Bind(r.job_memory_bytes_max);
  ins.Bind(r.steps);
  ins.Bind(r.epochs);
  ins.Bind(r.health_score);
  ins.Bind(r.gpu_hours);
  ins.Bind(r.busy_gpu_hours);
  ins.Bind(r.wasted_gpu_hours);
  ins.Bind(r.busy_ratio);
  ins.Bind(r.energy_kwh);
  ins.Bind(r.co2e_kg);
  ins.Bind(r.money);
  ins.Bind(r.currency);
  ins.Bind(r.gpu_energy_kwh);
  for (const std::string* text :
       {&r.user, &r.job, &r.job_kind, &r.account, &r.partition, &r.namespace_name}) {
    ins.Bind(*text);
  }
  if (ins.Step() != SQLITE_DONE) return *error = sqlite3_errmsg(db_), false;
  int64_t id = sqlite3_last_insert_rowid(db_);
  if (!r.findings.empty()) {
    Statement f(db_, "INSERT INTO runs_findings (run_id, id, severity) VALUES (?, ?, ?)", error);
    if (!f.ok()) return false;
    for (const RunFindingRef& ref : r.findings) {
      f.Reset();
      f.Bind(id);
      f.Bind(ref.id);
      f.Bind(ref.severity);
      if (f.Step() != SQLITE_DONE) return *error = sqlite3_errmsg(db_), false;
    }
  }
  return t.Commit(error);
}

bool RunIndex::Query(const RunQuery& q, std::vector<RunRecord>* out, std::string* error) {
  const RunSortKey* sort = q.sort.empty() ? nullptr : FindRunSortKey(q.sort);
  if (sort == nullptr && !q.sort.empty()) {
    *error = fmt::format("unknown sort key '{}'", q.sort);
    return false;
  }
  std::string where = Where(q);
  std::string sql = fmt::format("SELECT {} FROM runs r{}", kColumns, where);
  if (sort != nullptr) {
    sql += fmt::format(" ORDER BY r.{} {} NULLS LAST, r.start_t DESC, r.id DESC", sort->column,
                       sort->descending ? "DESC" : "ASC");
  }
  if (q.limit) sql += fmt::format(" LIMIT {}", *q.limit);
  Statement s(db_, sql, error);
  if (!s.ok()) return false;
  BindWhere(q, s);
  out->clear();
  std::unordered_map<int64_t, size_t> by_id;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    by_id[*s.Int(0)] = out->size();
    out->push_back(ReadRecord(s));
  }
  if (rc != SQLITE_DONE) return *error = sqlite3_errmsg(db_), false;
  if (q.with_findings && !out->empty()) {
    Statement f(db_,
                fmt::format("SELECT f.run_id, f.id, f.severity FROM runs_findings f JOIN runs r "
                            "ON r.id = f.run_id{} ORDER BY f.rowid",
                            where),
                error);
    if (!f.ok()) return false;
    BindWhere(q, f);
    while ((rc = f.Step()) == SQLITE_ROW) {
      auto it = by_id.find(*f.Int(0));
      if (it != by_id.end()) (*out)[it->second].findings.push_back({f.Text(1), f.Text(2)});
    }
    if (rc != SQLITE_DONE) return *error = sqlite3_errmsg(db_), false;
  }
  for (RunRecord& r : *out) {
    if (!q.check_missing) break;
    std::error_code ec;
    r.missing = !std::filesystem::is_directory(r.run_dir, ec);
  }
  return true;
}

std::optional<int64_t> RunIndex::Count(std::string* error) {
  Statement s(db_, "SELECT COUNT(*) FROM runs", error);
  if (!s.ok()) return std::nullopt;
  if (s.Step() != SQLITE_ROW) return *error = sqlite3_errmsg(db_), std::nullopt;
  return s.Int(0);
}

}  // namespace tv

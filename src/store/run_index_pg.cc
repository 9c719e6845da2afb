#include "store/run_index_pg.h"

#include <dlfcn.h>
#include <endian.h>
#include <fmt/format.h>
#include <libpq-fe.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "store/db_location.h"

namespace tv {
namespace {

// libpq's entry points, typed from its header's declarations; resolved at
// run time (the program is not linked with it).
struct Libpq {
  void* handle = nullptr;
  decltype(&PQconnectdbParams) connectdb_params = nullptr;
  decltype(&PQstatus) status = nullptr;
  decltype(&PQerrorMessage) error_message = nullptr;
  decltype(&PQfinish) finish = nullptr;
  decltype(&PQsetNoticeProcessor) set_notice_processor = nullptr;
  decltype(&PQexec) exec = nullptr;
  decltype(&PQexecParams) exec_params = nullptr;
  decltype(&PQresultStatus) result_status = nullptr;
  decltype(&PQresultErrorField) result_error_field = nullptr;
  decltype(&PQclear) clear = nullptr;
  decltype(&PQntuples) ntuples = nullptr;
  decltype(&PQgetvalue) getvalue = nullptr;
  decltype(&PQgetisnull) getisnull = nullptr;
  decltype(&PQgetlength) getlength = nullptr;
};

template <typename Fn>
bool Sym(void* handle, const char* name, Fn* fn, std::string* missing) {
  *fn = reinterpret_cast<Fn>(::dlsym(handle, name));
  if (*fn == nullptr && missing->empty()) *missing = name;
  return *fn != nullptr;
}

bool LoadLibpq(const std::string& soname, Libpq* lib, std::string* error) {
  lib->handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == nullptr) {
    *error = fmt::format("{} not found: install libpq5", soname);
    return false;
  }
  void* h = lib->handle;
  std::string missing;
  Sym(h, "PQconnectdbParams", &lib->connectdb_params, &missing);
  Sym(h, "PQstatus", &lib->status, &missing);
  Sym(h, "PQerrorMessage", &lib->error_message, &missing);
  Sym(h, "PQfinish", &lib->finish, &missing);
  Sym(h, "PQsetNoticeProcessor", &lib->set_notice_processor, &missing);
  Sym(h, "PQexec", &lib->exec, &missing);
  Sym(h, "PQexecParams", &lib->exec_params, &missing);
  Sym(h, "PQresultStatus", &lib->result_status, &missing);
  Sym(h, "PQresultErrorField", &lib->result_error_field, &missing);
  Sym(h, "PQclear", &lib->clear, &missing);
  Sym(h, "PQntuples", &lib->ntuples, &missing);
  Sym(h, "PQgetvalue", &lib->getvalue, &missing);
  Sym(h, "PQgetisnull", &lib->getisnull, &missing);
  Sym(h, "PQgetlength", &lib->getlength, &missing);
  if (!missing.empty()) {
    *error = fmt::format("{} lacks {}: not libpq? install libpq5", soname, missing);
    ::dlclose(h);
    lib->handle = nullptr;
    return false;
  }
  return true;
}

// The process's libpq, loaded on first use and kept; null with `*error`.
const Libpq* ProcessLibpq(std::string* error) {
  static std::mutex mutex;
  static Libpq lib;
  static std::string load_error;
  static bool tried = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (!tried) {
    tried = true;
    if (!LoadLibpq(kLibpqName, &lib, &load_error)) lib = Libpq();
  }
  if (lib.handle == nullptr) {
    *error = load_error;
    return nullptr;
  }
  return &lib;
}

// The server says NOTICEs (e.g. "relation already exists, skipping") on
// stderr by default; the history has nothing to say with them.
void IgnoreNotice(void* /*arg*/, const char* /*message*/) {}

// A parameter as libpq's text format takes it; null for NULL.
std::optional<std::string> ParamText(const SqlValue& v) {
  if (const auto* text = std::get_if<std::string>(&v)) return *text;
  if (const auto* integer = std::get_if<int64_t>(&v)) return fmt::format("{}", *integer);
  if (const auto* real = std::get_if<double>(&v)) {
    if (std::isnan(*real)) return "NaN";
    if (std::isinf(*real)) return *real > 0 ? "Infinity" : "-Infinity";
    return fmt::format("{}", *real);  // the shortest text that reads back the same double
  }
  return std::nullopt;
}

// A row of a result in PostgreSQL's binary format (no text to print and
// parse for each number): float8 as 8 bytes, integers as 2, 4 or 8, all in
// network byte order; text as its bytes.
class PgRow : public SqlRow {
 public:
  PgRow(const Libpq& lib, const PGresult* res, int row) : lib_(lib), res_(res), row_(row) {}
  std::string Text(int col) const override {
    if (Null(col)) return {};
    return std::string(lib_.getvalue(res_, row_, col),
                       static_cast<size_t>(lib_.getlength(res_, row_, col)));
  }
  std::optional<double> Real(int col) const override {
    if (Null(col)) return std::nullopt;
    if (lib_.getlength(res_, row_, col) != 8) return Int(col);  // an integer column
    uint64_t bits = be64toh(Bytes<uint64_t>(col));
    double v;
    std::memcpy(&v, &bits, sizeof(v));
    return v;
  }
  std::optional<int64_t> Int(int col) const override {
    if (Null(col)) return std::nullopt;
    switch (lib_.getlength(res_, row_, col)) {
      case 2:
        return static_cast<int16_t>(be16toh(Bytes<uint16_t>(col)));
      case 4:
        return static_cast<int32_t>(be32toh(Bytes<uint32_t>(col)));
      case 8:
        return static_cast<int64_t>(be64toh(Bytes<uint64_t>(col)));
      default:
        return std::nullopt;
    }
  }
  size_t ResultRows() const override { return static_cast<size_t>(lib_.ntuples(res_)); }

 private:
  bool Null(int col) const { return lib_.getisnull(res_, row_, col) != 0; }
  template <typename T>
  T Bytes(int col) const {
    T v;
    std::memcpy(&v, lib_.getvalue(res_, row_, col), sizeof(v));
    return v;
  }
  const Libpq& lib_;
  const PGresult* res_;
  int row_;
};

// The migrations, kPgMigrations[v] taking version v to v + 1: the SQLite
// file's steps (store/run_index.cc) in PostgreSQL's types, so that a version
// means the same columns in both. runs_findings.rowid keeps the order the
// findings were put in, as SQLite's implicit rowid does.
constexpr const char* kPgMigrations[] = {
    "CREATE TABLE runs ("
    " id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    " run_dir TEXT NOT NULL UNIQUE,"
    " name TEXT NOT NULL, command_json TEXT NOT NULL, command TEXT NOT NULL,"
    " host TEXT NOT NULL, start_t DOUBLE PRECISION, end_t DOUBLE PRECISION,"
    " duration_s DOUBLE PRECISION, exit_code INTEGER, signal INTEGER,"
    " gpu_count INTEGER NOT NULL, gpu_models TEXT NOT NULL,"
    " gpu_util_ratio_mean DOUBLE PRECISION, gpu_memory_bytes_max DOUBLE PRECISION,"
    " job_memory_bytes_max DOUBLE PRECISION, steps BIGINT, epochs BIGINT,"
    " health_score DOUBLE PRECISION, indexed_t DOUBLE PRECISION NOT NULL);"
    "CREATE INDEX runs_by_start ON runs(start_t);"
    "CREATE TABLE runs_findings ("
    " rowid BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    " run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " id TEXT NOT NULL, severity TEXT NOT NULL);"
    "CREATE INDEX runs_findings_by_run ON runs_findings(run_id);",
    // Cost accounting.
    "ALTER TABLE runs ADD COLUMN gpu_hours DOUBLE PRECISION,"
    " ADD COLUMN busy_gpu_hours DOUBLE PRECISION, ADD COLUMN wasted_gpu_hours DOUBLE PRECISION,"
    " ADD COLUMN busy_ratio DOUBLE PRECISION, ADD COLUMN energy_kwh DOUBLE PRECISION,"
    " ADD COLUMN co2e_kg DOUBLE PRECISION, ADD COLUMN money DOUBLE PRECISION,"
    " ADD COLUMN currency TEXT NOT NULL DEFAULT '';",
    // The GPUs' own energy.
    "ALTER TABLE runs ADD COLUMN gpu_energy_kwh DOUBLE PRECISION;",
    // Whose run it is and which scheduler job.
    "ALTER TABLE runs ADD COLUMN user_name TEXT NOT NULL DEFAULT '',"
    " ADD COLUMN job_id TEXT NOT NULL DEFAULT '', ADD COLUMN job_kind TEXT NOT NULL DEFAULT '',"
    " ADD COLUMN account TEXT NOT NULL DEFAULT '',"
    " ADD COLUMN partition_name TEXT NOT NULL DEFAULT '',"
    " ADD COLUMN namespace_name TEXT NOT NULL DEFAULT '';"
    "CREATE INDEX runs_by_job ON runs(job_id);",
};
static_assert(std::size(kPgMigrations) == RunIndex::kSchemaVersion);

// The advisory lock a migration step holds ("tvschema" as a number): nodes
// opening a new database at once take their turns.
constexpr int64_t kMigrationLock = 8392021826441932129;

class PgRunIndex : public RunIndex {
 public:
  PgRunIndex(const Libpq& lib, PGconn* conn, std::string url)
      : RunIndex(SqlDialect::kPostgres), lib_(lib), conn_(conn), url_(std::move(url)) {}
  ~PgRunIndex() override { lib_.finish(conn_); }

  bool Migrate(std::string* error) {
    std::optional<int> version;
    std::string sqlstate;
    if (ExecState("SELECT version FROM trainvitals_schema", {}, VersionRow(&version), error,
                  &sqlstate)) {
      if (version == kSchemaVersion) return true;
    } else if (sqlstate != "42P01") {  // undefined_table: a new database
      return false;
    }
    // A step at a time, each in its own transaction under the lock; the
    // version is read again under it (another node may have moved it).
    while (true) {
      version.reset();
      if (!Exec(fmt::format("BEGIN; SELECT pg_advisory_xact_lock({}); CREATE TABLE IF NOT "
                            "EXISTS trainvitals_schema (version INTEGER NOT NULL)",
                            kMigrationLock),
                {}, nullptr, error) ||
          !Exec("SELECT version FROM trainvitals_schema", {}, VersionRow(&version), error)) {
        return Rollback();
      }
      if (!version) {
        if (!Exec("INSERT INTO trainvitals_schema (version) VALUES (0)", {}, nullptr, error)) {
          return Rollback();
        }
        version = 0;
      }
      if (*version > kSchemaVersion) {
        *error = NewerSchemaError(*version);
        return Rollback();
      }
      if (*version == kSchemaVersion) return Exec("COMMIT", {}, nullptr, error) || Rollback();
      if (!Exec(kPgMigrations[*version], {}, nullptr, error) ||
          !Exec(fmt::format("UPDATE trainvitals_schema SET version = {}", *version + 1), {},
                nullptr, error) ||
          !Exec("COMMIT", {}, nullptr, error)) {
        return Rollback();
      }
    }
  }

 protected:
  bool Exec(const std::string& sql, const std::vector<SqlValue>& params, const RowFn& row,
            std::string* error) override {
    return ExecState(sql, params, row, error, nullptr);
  }

 private:
  static RowFn VersionRow(std::optional<int>* version) {
    return [version](const SqlRow& r) { *version = static_cast<int>(r.Int(0).value_or(0)); };
  }

  // Ends a failed transaction; false, for the caller to return.
  bool Rollback() {
    if (PGresult* res = lib_.exec(conn_, "ROLLBACK")) lib_.clear(res);
    return false;
  }

  // Exec, with the error's SQLSTATE in `*sqlstate` when asked.
  bool ExecState(const std::string& sql, const std::vector<SqlValue>& params, const RowFn& row,
                 std::string* error, std::string* sqlstate) {
    PGresult* res = nullptr;
    if (params.empty() && !row) {
      res = lib_.exec(conn_, sql.c_str());  // may hold several statements
    } else {
      std::vector<std::optional<std::string>> texts;
      texts.reserve(params.size());
      for (const SqlValue& v : params) texts.push_back(ParamText(v));
      std::vector<const char*> values;
      values.reserve(texts.size());
      for (const auto& t : texts) values.push_back(t ? t->c_str() : nullptr);
      res = lib_.exec_params(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                             values.data(), nullptr, nullptr, /*resultFormat=binary*/ 1);
    }
    ExecStatusType status = res != nullptr ? lib_.result_status(res) : PGRES_FATAL_ERROR;
    bool ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
    if (ok && row) {
      for (int i = 0, n = lib_.ntuples(res); i < n; ++i) row(PgRow(lib_, res, i));
    }
    if (!ok) {
      const char* primary =
          res != nullptr ? lib_.result_error_field(res, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
      *error =
          RedactPasswordIn(url_, OneLine(primary != nullptr ? primary : lib_.error_message(conn_)));
      const char* state = res != nullptr ? lib_.result_error_field(res, PG_DIAG_SQLSTATE) : nullptr;
      if (sqlstate != nullptr && state != nullptr) *sqlstate = state;
    }
    if (res != nullptr) lib_.clear(res);
    return ok;
  }

  const Libpq& lib_;
  PGconn* conn_;
  std::string url_;
};

}  // namespace

std::string OneLine(std::string_view message) {
  std::string out;
  while (!message.empty()) {
    size_t end = message.find('\n');
    std::string_view line = message.substr(0, end);
    message = end == std::string_view::npos ? std::string_view() : message.substr(end + 1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.front()))) {
      line.remove_prefix(1);
    }
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
      line.remove_suffix(1);
    }
    if (line.empty()) continue;
    if (!out.empty()) out += "; ";
    out += line;
  }
  return out;
}

bool LibpqLoads(const std::string& soname, std::string* error) {
  Libpq lib;
  if (!LoadLibpq(soname, &lib, error)) return false;
  ::dlclose(lib.handle);
  return true;
}

std::unique_ptr<RunIndex> OpenPostgresRunIndex(const std::string& url, std::string* error) {
  const Libpq* lib = ProcessLibpq(error);
  if (lib == nullptr) return nullptr;
  // Ours first, so that the URL's own settings win (libpq keeps the last).
  std::string timeout = std::to_string(kConnectTimeoutS);
  std::vector<const char*> keys, values;
  const char* env_timeout = std::getenv("PGCONNECT_TIMEOUT");
  if (env_timeout == nullptr || *env_timeout == '\0') {
    keys.push_back("connect_timeout");
    values.push_back(timeout.c_str());
  }
  // A commit does not wait for the server's disk (as the SQLite file's
  // synchronous=NORMAL): a crash of the server may lose the last runs, which
  // `runs import` brings back, never the database.
  keys.push_back("options");
  values.push_back("-c synchronous_commit=off");
  keys.push_back("fallback_application_name");
  values.push_back("trainvitals");
  keys.push_back("dbname");
  values.push_back(url.c_str());
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* conn = lib->connectdb_params(keys.data(), values.data(), /*expand_dbname=*/1);
  if (conn == nullptr) {
    *error = "out of memory";
    return nullptr;
  }
  auto index = std::make_unique<PgRunIndex>(*lib, conn, url);  // finishes conn on every way out
  if (lib->status(conn) != CONNECTION_OK) {
    *error = RedactPasswordIn(url, OneLine(lib->error_message(conn)));
    return nullptr;
  }
  lib->set_notice_processor(conn, IgnoreNotice, nullptr);
  if (!index->Migrate(error)) return nullptr;
  return index;
}

}  // namespace tv

// RunIndex: the run history (docs/schema.md "Run history"): one `runs` row
// per run directory, keyed by its absolute path, and its finding ids in
// `runs_findings`. Written when a run ends (Session::Finish, off the sampler
// thread) and by `runs import`; read by `trainvitals runs`.
//
// Two backends behind this one interface, chosen by Open from the location:
// - a file path: an SQLite database. Many processes may use one file at once:
//   WAL journal mode and a busy timeout (kBusyTimeoutMs) let 20 runs ending
//   together all land. Setting WAL on a new file is tried again while another
//   opener holds it (SQLite asks no busy handler there), within the same
//   timeout. The schema carries its version in PRAGMA user_version.
// - a postgresql:// or postgres:// URL: a team's PostgreSQL database
//   (store/run_index_pg.h), through libpq loaded when first asked for.
// Both keep the same tables and columns, migrate a step at a time on open,
// and share every statement but a few dialect words (store/run_index_sql.h),
// so a query gives the same runs in the same order from either.
//
// Nothing here throws: every failure is a false/empty return with `*error`
// saying what (the database's own words, e.g. "file is not a database"; a
// URL's password never appears in it).
// Thread safety: one RunIndex per thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/run_index_sql.h"
#include "store/run_record.h"

struct sqlite3;

namespace tv {

// $XDG_DATA_HOME/trainvitals/runs.db, else ~/.local/share/trainvitals/runs.db
// ($HOME, else the user's home directory in the password database); "" when
// there is none.
std::string DefaultRunIndexPath();

// Which runs a query returns, in which order.
struct RunQuery {
  std::optional<double> since_t;  // start_t at or after
  std::string name_glob;          // shell glob on the name ("" any)
  std::string host;               // exact host ("" any)
  std::string command_text;       // a substring of the joined command ("" any)
  std::string user;               // exact owner ("" any)
  std::string job;                // exact scheduler job id ("" any)
  std::string sort = "start";     // a key of RunSortKeys(); "": in no particular order
  std::optional<int64_t> limit;   // at most this many
  bool with_findings = false;     // fill RunRecord::findings
  bool check_missing = true;      // set RunRecord::missing (a stat per run)
  // Read only what `runs stats` adds up and groups by (store/run_index_sql.cc); the
  // other fields stay empty/unknown. Less to carry from a server.
  bool stats_only = false;
};

struct RunSortKey {
  const char* key;
  const char* column;
  bool descending;  // the most first
};
// The keys --sort accepts, in the order --help lists them.
const std::vector<RunSortKey>& RunSortKeys();
const RunSortKey* FindRunSortKey(std::string_view key);

class RunIndex {
 public:
  static constexpr int kSchemaVersion = 4;
  static constexpr int kBusyTimeoutMs = 5000;
  // An SQLite history whose write-ahead log is larger when it is opened is
  // checkpointed then (64 pages: about 16 runs).
  static constexpr long kCheckpointLogBytes = 64L * 4120;

  // Opens and migrates the history at `location`: a postgresql:// URL
  // (store/run_index_pg.h), else an SQLite file, created with its directory
  // when needed. Null with `*error` set when it cannot be used. What SQLite
  // creates is private: directories 0700, the file 0600 (and so its -wal and
  // -shm). At DefaultRunIndexPath() it also narrows the modes of this user's
  // directory and files made before to those; a file given elsewhere that
  // exists keeps its mode.
  static std::unique_ptr<RunIndex> Open(const std::string& location, std::string* error);
  virtual ~RunIndex() = default;
  RunIndex(const RunIndex&) = delete;
  RunIndex& operator=(const RunIndex&) = delete;

  // Adds `r`, replacing the row of the same run directory (its id kept) and
  // its findings, in one transaction.
  bool Put(const RunRecord& r, std::string* error);

  // Compiles Put's statements now, for a Put that comes later (the end of a
  // run, which would otherwise wait a third of a millisecond for them).
  bool PreparePut(std::string* error);

  // The runs `q` selects, sorted by q.sort (unknown values last), then newest first.
  // A false return (with `*error`) on a database error.
  bool Query(const RunQuery& q, std::vector<RunRecord>* out, std::string* error);

  // Runs indexed; none with `*error` on a database error.
  std::optional<int64_t> Count(std::string* error);

  // Whether the file opened is no longer at its path (removed or replaced
  // since): what is written then is lost. Never for PostgreSQL.
  virtual bool Moved() { return false; }

 protected:
  explicit RunIndex(SqlDialect dialect) : dialect_(dialect) {}
  using RowFn = std::function<void(const SqlRow&)>;
  // Runs one statement with `params` bound to its parameters in order,
  // calling `row` (when set) for each result row. False with `*error` set on
  // an error.
  virtual bool Exec(const std::string& sql, const std::vector<SqlValue>& params, const RowFn& row,
                    std::string* error) = 0;
  // Compiles `sql` for the Execs of it that follow, where the backend keeps
  // compiled statements (SQLite); else nothing.
  virtual bool Prepare(const std::string& sql, std::string* error) {
    (void)sql;
    (void)error;
    return true;
  }

 private:
  SqlDialect dialect_;
};

// SQLite: one migration per version step: kMigrations[v] takes user_version v
// to v+1 (PostgreSQL's own, of the same steps: store/run_index_pg.cc).
// Exposed for the migration test, which builds an older database.
bool ExecSql(sqlite3* db, const char* sql, std::string* error);
bool MigrateTo1(sqlite3* db, std::string* error);
bool MigrateTo2(sqlite3* db, std::string* error);
bool MigrateTo3(sqlite3* db, std::string* error);
bool MigrateTo4(sqlite3* db, std::string* error);

}  // namespace tv

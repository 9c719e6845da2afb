// What the run history's backends (SQLite: store/run_index.cc, PostgreSQL:
// store/run_index_pg.cc) share: the statements, written once with the few
// words where the two dialects differ; a RunRecord's values in column order;
// a row read back into a RunRecord. Pure: no database is touched here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "store/run_record.h"

namespace tv {

struct RunQuery;

// A statement parameter: NULL, text, a real or an integer.
using SqlValue = std::variant<std::monostate, std::string, double, int64_t>;

// One result row, read by column (0-based).
class SqlRow {
 public:
  virtual ~SqlRow() = default;
  virtual std::string Text(int col) const = 0;  // "" for NULL
  virtual std::optional<double> Real(int col) const = 0;
  virtual std::optional<int64_t> Int(int col) const = 0;
  // How many rows the result holds; 0 when unknown until they are read.
  virtual size_t ResultRows() const { return 0; }
};

// Where the dialects differ.
enum class SqlDialect { kSqlite, kPostgres };

// Parameter `n` (1-based) as the dialect writes it: "?n" or "$n".
std::string SqlParam(SqlDialect d, int n);

// The statements, their parameters numbered from 1.
// SELECT of the columns ReadRunRow reads (id first) from `runs r`, with q's
// filters, order and limit; appends the parameters to `*params`. Unknown
// sort keys are the caller's to refuse (FindRunSortKey).
std::string SelectRunsSql(SqlDialect d, const RunQuery& q, std::vector<SqlValue>* params);
// (run_id, id, severity) of the findings of the runs q selects, in the order
// they were put (unless q.stats_only).
std::string SelectFindingsSql(SqlDialect d, const RunQuery& q, std::vector<SqlValue>* params);
// INSERT of one run, replacing the row of the same run_dir in place
// (ON CONFLICT DO UPDATE), returning its id; parameters: RunRowValues(r).
std::string UpsertRunSql(SqlDialect d);
// INSERT of `n` findings of run $1/?1: parameters run id, then id and severity
// of each.
std::string InsertFindingsSql(SqlDialect d, size_t n);
// The transaction a Put runs in, and its end.
const char* BeginSql(SqlDialect d);

// r's values in the column order of UpsertRunSql.
std::vector<SqlValue> RunRowValues(const RunRecord& r);
// The record of a row of SelectRunsSql (its column 0, the id, left to the
// caller) for a query of `stats_only` (RunQuery).
RunRecord ReadRunRow(const SqlRow& row, bool stats_only);

// "written by a newer trainvitals (schema N; this one knows M)": a history
// whose schema version is ahead of this program's.
std::string NewerSchemaError(int version);

// A shell glob (what SQLite's GLOB matches: * ? [...] [^...]) as a POSIX
// regular expression matching the same whole names (PostgreSQL's ~).
std::string GlobToRegex(std::string_view glob);

}  // namespace tv

#include "store/run_index_sql.h"

#include <fmt/format.h>

#include <filesystem>
#include <type_traits>
#include <unordered_map>

#include "store/run_index.h"

namespace tv {
namespace {

// A RunRecord field a column holds.
using RunField = std::variant<std::string RunRecord::*, std::optional<double> RunRecord::*,
                              std::optional<int64_t> RunRecord::*, std::optional<int> RunRecord::*,
                              int RunRecord::*>;
struct RunColumn {
  const char* name;
  RunField field;
  bool stats;  // read by `runs stats` (ComputeRunStats, its views, RunGroupValue)
};

// The columns of a run, in the order Put writes them (indexed_t, the time of
// writing, comes after them) and a query reads them (after the id).
const RunColumn kRunColumns[] = {
    {"run_dir", &RunRecord::run_dir, true},
    {"name", &RunRecord::name, true},
    {"command_json", &RunRecord::command_json, false},
    {"command", &RunRecord::command, false},
    {"host", &RunRecord::host, true},
    {"start_t", &RunRecord::start_t, false},
    {"end_t", &RunRecord::end_t, false},
    {"duration_s", &RunRecord::duration_s, true},
    {"exit_code", &RunRecord::exit_code, false},
    {"signal", &RunRecord::signal, false},
    {"gpu_count", &RunRecord::gpu_count, false},
    {"gpu_models", &RunRecord::gpu_models, false},
    {"gpu_util_ratio_mean", &RunRecord::gpu_util_ratio_mean, false},
    {"gpu_memory_bytes_max", &RunRecord::gpu_memory_bytes_max, false},
    {"job_memory_bytes_max", &RunRecord::job_memory_bytes_max, false},
    {"steps", &RunRecord::steps, false},
    {"epochs", &RunRecord::epochs, false},
    {"health_score", &RunRecord::health_score, false},
    {"gpu_hours", &RunRecord::gpu_hours, true},
    {"busy_gpu_hours", &RunRecord::busy_gpu_hours, true},
    {"wasted_gpu_hours", &RunRecord::wasted_gpu_hours, true},
    {"busy_ratio", &RunRecord::busy_ratio, true},
    {"energy_kwh", &RunRecord::energy_kwh, true},
    {"co2e_kg", &RunRecord::co2e_kg, true},
    {"money", &RunRecord::money, true},
    {"currency", &RunRecord::currency, true},
    {"gpu_energy_kwh", &RunRecord::gpu_energy_kwh, false},
    {"user_name", &RunRecord::user, true},
    {"job_id", &RunRecord::job, true},
    {"job_kind", &RunRecord::job_kind, false},
    {"account", &RunRecord::account, true},
    {"partition_name", &RunRecord::partition, true},
    {"namespace_name", &RunRecord::namespace_name, true},
};

// Calls `fn` with each column a query of `stats_only` (RunQuery) reads.
template <typename Fn>
void ForEachReadColumn(bool stats_only, Fn fn) {
  for (const RunColumn& c : kRunColumns) {
    if (!stats_only || c.stats) fn(c);
  }
}

// " WHERE ..." for `q`, appending its parameters to `*params`.
std::string WhereSql(SqlDialect d, const RunQuery& q, std::vector<SqlValue>* params) {
  std::string w;
  auto add = [&](std::string_view cond, SqlValue value) {
    params->push_back(std::move(value));
    std::string p = SqlParam(d, static_cast<int>(params->size()));
    w += fmt::format("{}{}", w.empty() ? " WHERE " : " AND ", fmt::format(fmt::runtime(cond), p));
  };
  bool pg = d == SqlDialect::kPostgres;
  if (q.since_t) add("r.start_t >= {}", *q.since_t);
  if (!q.name_glob.empty()) {
    if (pg) {
      add("r.name ~ {}", GlobToRegex(q.name_glob));
    } else {
      add("r.name GLOB {}", q.name_glob);
    }
  }
  if (!q.host.empty()) add("r.host = {}", q.host);
  if (!q.command_text.empty()) {
    add(pg ? "strpos(r.command, {}) > 0" : "instr(r.command, {}) > 0", q.command_text);
  }
  if (!q.user.empty()) add("r.user_name = {}", q.user);
  if (!q.job.empty()) add("r.job_id = {}", q.job);
  return w;
}

}  // namespace

std::string SqlParam(SqlDialect d, int n) {
  return fmt::format("{}{}", d == SqlDialect::kPostgres ? '$' : '?', n);
}

std::string SelectRunsSql(SqlDialect d, const RunQuery& q, std::vector<SqlValue>* params) {
  std::string sql = "SELECT r.id";
  ForEachReadColumn(q.stats_only,
                    [&](const RunColumn& c) { sql += fmt::format(", r.{}", c.name); });
  sql += " FROM runs r" + WhereSql(d, q, params);
  if (const RunSortKey* sort = q.sort.empty() ? nullptr : FindRunSortKey(q.sort)) {
    // Text in byte order in both (SQLite's BINARY; PostgreSQL's "C", not the
    // database's locale).
    bool text = std::string_view(sort->column) == "name";
    sql += fmt::format(" ORDER BY r.{}{} {} NULLS LAST, r.start_t DESC, r.id DESC", sort->column,
                       text && d == SqlDialect::kPostgres ? " COLLATE \"C\"" : "",
                       sort->descending ? "DESC" : "ASC");
  }
  if (q.limit) sql += fmt::format(" LIMIT {}", *q.limit);
  return sql;
}

std::string SelectFindingsSql(SqlDialect d, const RunQuery& q, std::vector<SqlValue>* params) {
  std::string where = WhereSql(d, q, params);
  // Every run's: no join to filter by. The stats count ids in any order.
  return fmt::format("SELECT f.run_id, f.id, f.severity FROM runs_findings f{}{}{}",
                     where.empty() ? "" : " JOIN runs r ON r.id = f.run_id", where,
                     q.stats_only ? "" : " ORDER BY f.rowid");
}

std::string UpsertRunSql(SqlDialect d) {
  std::string columns, values, updates;
  int n = 0;
  for (const RunColumn& c : kRunColumns) {
    const char* sep = n == 0 ? "" : ", ";
    columns += fmt::format("{}{}", sep, c.name);
    values += fmt::format("{}{}", sep, SqlParam(d, ++n));
    updates += fmt::format("{}{} = excluded.{}", sep, c.name, c.name);
  }
  const char* now = d == SqlDialect::kPostgres ? "EXTRACT(EPOCH FROM clock_timestamp())::float8"
                                               : "(julianday('now') - 2440587.5) * 86400.0";
  return fmt::format(
      "INSERT INTO runs ({}, indexed_t) VALUES ({}, {}) ON CONFLICT (run_dir) DO UPDATE SET {}, "
      "indexed_t = excluded.indexed_t RETURNING id",
      columns, values, now, updates);
}

std::string InsertFindingsSql(SqlDialect d, size_t n) {
  std::string sql = "INSERT INTO runs_findings (run_id, id, severity) VALUES ";
  std::string run = SqlParam(d, 1);
  for (size_t i = 0; i < n; ++i) {
    int p = 2 + static_cast<int>(i) * 2;
    sql +=
        fmt::format("{}({}, {}, {})", i == 0 ? "" : ", ", run, SqlParam(d, p), SqlParam(d, p + 1));
  }
  return sql;
}

const char* BeginSql(SqlDialect d) {
  // SQLite: take the write lock now, so a busy database waits in the busy
  // handler instead of failing at the first write.
  return d == SqlDialect::kPostgres ? "BEGIN" : "BEGIN IMMEDIATE";
}

std::vector<SqlValue> RunRowValues(const RunRecord& r) {
  std::vector<SqlValue> values;
  values.reserve(std::size(kRunColumns));
  for (const RunColumn& c : kRunColumns) {
    std::visit(
        [&](auto field) {
          const auto& v = r.*field;
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            values.emplace_back(v);
          } else if constexpr (std::is_same_v<T, int>) {
            values.emplace_back(static_cast<int64_t>(v));
          } else if constexpr (std::is_same_v<T, std::optional<double>>) {
            values.push_back(v ? SqlValue(*v) : SqlValue());
          } else {
            values.push_back(v ? SqlValue(static_cast<int64_t>(*v)) : SqlValue());
          }
        },
        c.field);
  }
  return values;
}

RunRecord ReadRunRow(const SqlRow& row, bool stats_only) {
  RunRecord r;
  int col = 1;
  ForEachReadColumn(stats_only, [&](const RunColumn& c) {
    std::visit(
        [&](auto field) {
          auto& v = r.*field;
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            v = row.Text(col);
          } else if constexpr (std::is_same_v<T, std::optional<double>>) {
            v = row.Real(col);
          } else if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
            v = row.Int(col);
          } else if constexpr (std::is_same_v<T, std::optional<int>>) {
            if (auto i = row.Int(col)) v = static_cast<int>(*i);
          } else {
            v = static_cast<int>(row.Int(col).value_or(0));
          }
        },
        c.field);
    ++col;
  });
  return r;
}

std::string NewerSchemaError(int version) {
  return fmt::format("written by a newer trainvitals (schema {}; this one knows {})", version,
                     RunIndex::kSchemaVersion);
}

std::string GlobToRegex(std::string_view glob) {
  std::string re = "^";
  auto literal = [&](char c) {
    if (std::string_view(".^$|()[]{}*+?\\").find(c) != std::string_view::npos) re += '\\';
    re += c;
  };
  for (size_t i = 0; i < glob.size(); ++i) {
    char c = glob[i];
    if (c == '*') {
      re += ".*";
    } else if (c == '?') {
      re += '.';
    } else if (c == '[') {
      // A set: "]" first is one of its members; "^" first negates it.
      size_t j = i + 1;
      std::string set = "[";
      if (j < glob.size() && glob[j] == '^') set += '^', ++j;
      if (j < glob.size() && glob[j] == ']') set += "\\]", ++j;
      while (j < glob.size() && glob[j] != ']') {
        char m = glob[j++];
        if (m == '\\' || m == '[') set += '\\';
        set += m;
      }
      if (j >= glob.size()) return "x^";  // an unclosed set matches nothing, as in SQLite
      re += set + ']';
      i = j;
    } else {
      literal(c);
    }
  }
  return re + "$";
}

namespace {

std::string DeleteFindingsSql(SqlDialect d) {
  return fmt::format("DELETE FROM runs_findings WHERE run_id = {}", SqlParam(d, 1));
}

}  // namespace

bool RunIndex::PreparePut(std::string* error) {
  return Prepare(UpsertRunSql(dialect_), error) && Prepare(DeleteFindingsSql(dialect_), error);
}

bool RunIndex::Put(const RunRecord& r, std::string* error) {
  auto fail = [&] {
    std::string ignored;
    (void)Exec("ROLLBACK", {}, nullptr, &ignored);
    return false;
  };
  if (!Exec(BeginSql(dialect_), {}, nullptr, error)) return false;
  std::optional<int64_t> id;
  if (!Exec(
          UpsertRunSql(dialect_), RunRowValues(r), [&](const SqlRow& row) { id = row.Int(0); },
          error)) {
    return fail();
  }
  if (!id) {
    *error = "the run's row was not written";
    return fail();
  }
  std::vector<SqlValue> params = {*id};
  if (!Exec(DeleteFindingsSql(dialect_), params, nullptr, error)) {
    return fail();
  }
  if (!r.findings.empty()) {
    for (const RunFindingRef& f : r.findings) {
      params.emplace_back(f.id);
      params.emplace_back(f.severity);
    }
    if (!Exec(InsertFindingsSql(dialect_, r.findings.size()), params, nullptr, error)) {
      return fail();
    }
  }
  if (!Exec("COMMIT", {}, nullptr, error)) return fail();
  return true;
}

bool RunIndex::Query(const RunQuery& q, std::vector<RunRecord>* out, std::string* error) {
  if (!q.sort.empty() && FindRunSortKey(q.sort) == nullptr) {
    *error = fmt::format("unknown sort key '{}'", q.sort);
    return false;
  }
  out->clear();
  std::unordered_map<int64_t, size_t> by_id;
  std::vector<SqlValue> params;
  std::string sql = SelectRunsSql(dialect_, q, &params);
  if (!Exec(
          sql, params,
          [&](const SqlRow& row) {
            if (out->empty()) {
              out->reserve(row.ResultRows());
              by_id.reserve(row.ResultRows());
            }
            by_id[row.Int(0).value_or(0)] = out->size();
            out->push_back(ReadRunRow(row, q.stats_only));
          },
          error)) {
    return false;
  }
  if (q.with_findings && !out->empty()) {
    params.clear();
    sql = SelectFindingsSql(dialect_, q, &params);
    if (!Exec(
            sql, params,
            [&](const SqlRow& row) {
              auto it = by_id.find(row.Int(0).value_or(0));
              if (it != by_id.end())
                (*out)[it->second].findings.push_back({row.Text(1), row.Text(2)});
            },
            error)) {
      return false;
    }
  }
  for (RunRecord& r : *out) {
    if (!q.check_missing) break;
    std::error_code ec;
    r.missing = !std::filesystem::is_directory(r.run_dir, ec);
  }
  return true;
}

std::optional<int64_t> RunIndex::Count(std::string* error) {
  std::optional<int64_t> n;
  if (!Exec(
          "SELECT COUNT(*) FROM runs", {}, [&](const SqlRow& row) { n = row.Int(0); }, error)) {
    return std::nullopt;
  }
  if (!n) *error = "no count";
  return n;
}

}  // namespace tv

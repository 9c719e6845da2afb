#include "store/run_index_sql.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <regex>

#include "store/run_index.h"
#include "store/run_index_pg.h"

namespace tv::run_index_sql_test {
namespace {

// Whether SQLite's GLOB matches `name` against `glob`.
bool SqliteGlob(const std::string& glob, const std::string& name) {
  sqlite3* db = nullptr;
  sqlite3_open(":memory:", &db);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "SELECT ?1 GLOB ?2", -1, &s, nullptr);
  sqlite3_bind_text(s, 1, name.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 2, glob.c_str(), -1, SQLITE_TRANSIENT);
  bool match = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0) == 1;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return match;
}

TEST(RunIndexSql, GlobToRegexMatchesWhatSqliteGlobMatches) {
  const std::vector<std::string> names = {
      "train", "train-a", "Train-b", "eval", "t.r", "tXr",  "a+b", "a(b)", "x]y",  "x^y",
      "job1",  "job12",   "job2",    "",     "[x]", "a\\b", "a$b", "a|b",  "a{2}", "2+2"};
  const std::vector<std::string> globs = {
      "train*", "*",      "?",    "t?r", "t.r",  "job1*",  "job[12]", "job[^1]*",
      "[]x]*",  "x[]^]y", "x^y",  "a+b", "a(b)", "[a-c]*", "*[!]*",   "a\\b",
      "a$b",    "a|b",    "a{2}", "2+2", "[x",   "*-?",    "[[]x]",   "[^a-z]*"};
  for (const std::string& glob : globs) {
    std::regex re(GlobToRegex(glob));
    for (const std::string& name : names) {
      EXPECT_EQ(std::regex_search(name, re), SqliteGlob(glob, name))
          << "glob " << glob << " name '" << name << "' regex " << GlobToRegex(glob);
    }
  }
}

TEST(RunIndexSql, WritesEachDialectsParametersAndWords) {
  RunQuery q;
  q.since_t = 100;
  q.name_glob = "train*";
  q.command_text = "--fast";
  q.user = "alice";
  q.sort = "name";
  q.limit = 5;
  std::vector<SqlValue> lite, pg;
  std::string sqlite_sql = SelectRunsSql(SqlDialect::kSqlite, q, &lite);
  std::string pg_sql = SelectRunsSql(SqlDialect::kPostgres, q, &pg);
  EXPECT_NE(sqlite_sql.find(" WHERE r.start_t >= ?1 AND r.name GLOB ?2 AND instr(r.command, ?3) > 0"
                            " AND r.user_name = ?4 ORDER BY r.name ASC NULLS LAST,"
                            " r.start_t DESC, r.id DESC LIMIT 5"),
            std::string::npos)
      << sqlite_sql;
  EXPECT_NE(pg_sql.find(" WHERE r.start_t >= $1 AND r.name ~ $2 AND strpos(r.command, $3) > 0"
                        " AND r.user_name = $4 ORDER BY r.name COLLATE \"C\" ASC NULLS LAST,"
                        " r.start_t DESC, r.id DESC LIMIT 5"),
            std::string::npos)
      << pg_sql;
  EXPECT_EQ(lite, (std::vector<SqlValue>{100.0, std::string("train*"), std::string("--fast"),
                                         std::string("alice")}));
  EXPECT_EQ(pg, (std::vector<SqlValue>{100.0, std::string("^train.*$"), std::string("--fast"),
                                       std::string("alice")}));
  // The same columns from both, in the same order.
  EXPECT_EQ(sqlite_sql.substr(0, sqlite_sql.find(" FROM")), pg_sql.substr(0, pg_sql.find(" FROM")));
}

TEST(RunIndexSql, AnUpsertKeepsTheRowAndWritesEveryColumn) {
  std::string pg = UpsertRunSql(SqlDialect::kPostgres);
  EXPECT_NE(pg.find("ON CONFLICT (run_dir) DO UPDATE SET run_dir = excluded.run_dir"),
            std::string::npos);
  EXPECT_NE(pg.find("RETURNING id"), std::string::npos);
  size_t params = RunRowValues(RunRecord()).size();
  EXPECT_NE(pg.find(fmt::format("${},", params)), std::string::npos) << pg;
  EXPECT_EQ(pg.find(fmt::format("${}", params + 1)), std::string::npos) << pg;
  std::string lite = UpsertRunSql(SqlDialect::kSqlite);
  EXPECT_NE(lite.find(fmt::format("?{},", params)), std::string::npos) << lite;
  EXPECT_EQ(InsertFindingsSql(SqlDialect::kPostgres, 2),
            "INSERT INTO runs_findings (run_id, id, severity) VALUES ($1, $2, $3), ($1, $4, $5)");
  EXPECT_EQ(InsertFindingsSql(SqlDialect::kSqlite, 1),
            "INSERT INTO runs_findings (run_id, id, severity) VALUES (?1, ?2, ?3)");
}

TEST(RunIndexSql, ALibpqMessageIsOneLine) {
  EXPECT_EQ(OneLine("connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n"
                    "\tIs the server running on that host and accepting TCP/IP connections?\n"),
            "connection to server at \"127.0.0.1\", port 1 failed: Connection refused; Is the "
            "server running on that host and accepting TCP/IP connections?");
  EXPECT_EQ(OneLine("  \n"), "");
}

TEST(RunIndexSql, AMissingLibpqSaysWhatToInstall) {
  std::string error;
  EXPECT_FALSE(LibpqLoads("libpq-that-is-not-there.so.5", &error));
  EXPECT_EQ(error, "libpq-that-is-not-there.so.5 not found: install libpq5");
}

TEST(RunIndexSql, ARefusedServerIsOneLineWithoutThePassword) {
  std::string error;
  auto index = RunIndex::Open("postgresql://tv:pw-secret@127.0.0.1:1/runs", &error);
  EXPECT_EQ(index, nullptr);
  if (error.find("install libpq5") != std::string::npos) GTEST_SKIP() << error;
  EXPECT_NE(error.find("Connection refused"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(error.find("pw-secret"), std::string::npos) << error;
}

}  // namespace
}  // namespace tv::run_index_sql_test

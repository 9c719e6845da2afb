// The run history in PostgreSQL: a team's one history, written by every node
// and read by every user (docs/schema.md "Run history", docs/cluster.md).
// The same tables and columns as the SQLite file (store/run_index.h), their
// version in the one-row table `trainvitals_schema`, migrated a step at a
// time, each step in a transaction holding an advisory lock so that two
// nodes opening a new database at once migrate it once. Put is an upsert on
// run_dir, in one transaction with its findings' rows.
//
// libpq (Debian's libpq5) is loaded with dlopen when a postgresql:// URL is
// first opened, so a program that never opens one neither pays its start nor
// needs it installed. Authentication is libpq's own: the URL, the PG*
// environment variables, ~/.pgpass. The connection waits at most
// kConnectTimeoutS for the server (unless the URL or PGCONNECT_TIMEOUT says
// otherwise), so a run's end is never held long by a database that is down.
// Errors are one line and never hold the URL's password.
// Thread safety: one index per thread (one connection each).
#pragma once

#include <memory>
#include <string>

#include "store/run_index.h"

namespace tv {

inline constexpr int kConnectTimeoutS = 5;
// The library loaded, by its run-time name.
inline constexpr const char* kLibpqName = "libpq.so.5";

// Connects to the database `url` names (postgresql:// or postgres://) and
// migrates it. Null with `*error` set ("libpq.so.5 not found: install libpq5",
// the server's words) when it cannot be used.
std::unique_ptr<RunIndex> OpenPostgresRunIndex(const std::string& url, std::string* error);

// Whether libpq loads from `soname` (what Open uses: kLibpqName); false with
// `*error` saying to install it. For the tests of the message.
bool LibpqLoads(const std::string& soname, std::string* error);

// One line of a libpq message: its lines trimmed and joined by "; ".
std::string OneLine(std::string_view message);

}  // namespace tv

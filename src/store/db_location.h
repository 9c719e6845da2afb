// Where a run history lives, as `--db` and the config file's `db` name it: a
// file path (SQLite) or a postgresql:// (or postgres://) URL (PostgreSQL).
// Pure functions of the text: no file or server is touched here.
#pragma once

#include <string>
#include <string_view>

namespace tv {

// True for a postgresql:// or postgres:// URL (the scheme in any case).
bool IsPostgresUrl(std::string_view location);

// `location` as it may be printed: a URL's password (in its user part, and a
// `password=` query parameter) replaced by "***"; a file path unchanged.
std::string RedactLocation(std::string_view location);

// `text` (a server's message) with every occurrence of the password that
// `location` carries replaced by "***"; `text` unchanged when it carries none
// or one too short to find safely.
std::string RedactPasswordIn(std::string_view location, std::string text);

}  // namespace tv

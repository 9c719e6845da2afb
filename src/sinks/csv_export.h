// samples.jsonl as CSV: one row per line, one column per flattened key.
//
// Flattening: top-level numbers keep their key (t, elapsed_s); an object's
// members are "<object>.<key>" (host.cpu_util_ratio, job.memory_bytes_max);
// an array of numbers gives one column per element (host.core_util_ratio.0);
// each entry of "gpus" is "gpu<index>.<key>" after its "index" field
// (gpu0.util_ratio), other arrays of objects "<key>.<position>.<member>".
// Columns are the union of keys over all rows in first-seen order; a key a row
// lacks is an empty cell, as is null.
//
// Pure parts (FlattenJson, CsvField) are thread-safe; ExportCsv does I/O.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tv {

using FlatRow = std::vector<std::pair<std::string, std::string>>;

// Flattens one samples.jsonl object into (column, cell text) pairs.
FlatRow FlattenJson(const nlohmann::ordered_json& row);

// One cell: cells hold foreign text (process names), so this is CsvCell
// (core/escape.h): control bytes made visible, a text starting with '=', '+',
// '-' or '@' led by "'" (numbers such as -0.5 left alone), quoted as RFC 4180.
std::string CsvField(const std::string& text);

// Writes `samples_path` as CSV to `out`, read through core/run_file.h's
// limits. Throws ConfigError naming the file (and line) when it is missing, not
// a regular file, holds no row, or holds a line that is not a JSON object or is
// nested deeper than 16 levels; a cut last line (a crash mid-write) and lines
// longer than kMaxJsonlLineBytes are skipped with a note on stderr.
void ExportCsv(const std::string& samples_path, std::ostream& out);

}  // namespace tv

#include "sinks/csv_export.h"

#include <fmt/format.h>

#include <ostream>
#include <unordered_map>

#include "core/config.h"
#include "core/escape.h"
#include "core/run_file.h"

namespace tv {
namespace {

using OJson = nlohmann::ordered_json;

std::string Cell(const OJson& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

void Flatten(const std::string& prefix, const OJson& v, FlatRow* out) {
  auto join = [&prefix](const std::string& key) {
    return prefix.empty() ? key : prefix + "." + key;
  };
  if (v.is_object()) {
    for (const auto& [key, member] : v.items()) {
      if (prefix.empty() && key == "gpus" && member.is_array()) {
        for (size_t i = 0; i < member.size(); ++i) {
          const OJson& gpu = member[i];
          auto index = gpu.is_object() && gpu.contains("index") && gpu["index"].is_number_integer()
                           ? gpu["index"].get<int64_t>()
                           : static_cast<int64_t>(i);
          Flatten(fmt::format("gpu{}", index), gpu, out);
        }
      } else {
        Flatten(join(key), member, out);
      }
    }
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) Flatten(join(std::to_string(i)), v[i], out);
  } else {
    out->emplace_back(prefix, Cell(v));
  }
}

// Deeper than any row we write (gpus[].x is 3 levels); bounds Flatten's
// recursion and its prefixes, which grow with the depth.
constexpr int kMaxDepth = 16;

// Calls `fn(row)` for each object in the file, read through a JsonlReader
// (core/run_file.h: a regular file, lines capped, depth checked before
// parsing); throws ConfigError on a file that cannot be read, on bad lines and
// when it holds no row.
template <typename Fn>
void ForEachRow(const std::string& path, bool warn, Fn fn) {
  JsonlReader reader;
  if (Status s = reader.Open(path); !s.ok()) {
    throw ConfigError(s.code() == Status::Code::kNotFound
                          ? fmt::format("{}: cannot read (not a run directory?)", path)
                          : s.message());
  }
  JsonlReader::Line line;
  size_t rows = 0;
  while (reader.Next(&line)) {
    if (line.text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (JsonNestedDeeperThan(line.text, kMaxDepth)) {
      throw ConfigError(
          fmt::format("{}:{}: nested deeper than {} levels", path, line.number, kMaxDepth));
    }
    OJson row = OJson::parse(line.text, nullptr, false);
    if (row.is_discarded() || !row.is_object()) {
      if (line.cut && row.is_discarded()) {
        if (warn) {
          fmt::print(stderr, "trainvitals: {}:{}: skipping a cut last line\n", path, line.number);
        }
        break;
      }
      throw ConfigError(fmt::format("{}:{}: not a JSON object", path, line.number));
    }
    fn(row);
    ++rows;
  }
  if (!reader.status().ok()) throw ConfigError(reader.status().message());
  if (warn && reader.long_lines() > 0) {
    fmt::print(stderr, "trainvitals: {}\n", LongLinesNote(reader, path));
  }
  if (rows == 0) {
    std::string note = LongLinesNote(reader, path);
    throw ConfigError(
        fmt::format("{}: no rows to export{}", path, note.empty() ? "" : " (" + note + ")"));
  }
}

}  // namespace

FlatRow FlattenJson(const nlohmann::ordered_json& row) {
  FlatRow out;
  Flatten("", row, &out);
  return out;
}

std::string CsvField(const std::string& text) { return CsvCell(text); }

void ExportCsv(const std::string& samples_path, std::ostream& out) {
  // Two passes: the columns first, so rows stream without being held.
  std::vector<std::string> columns;
  std::unordered_map<std::string, size_t> column_of;
  ForEachRow(samples_path, false, [&](const OJson& row) {
    for (auto& [key, cell] : FlattenJson(row)) {
      if (column_of.emplace(key, columns.size()).second) columns.push_back(key);
    }
  });
  for (size_t i = 0; i < columns.size(); ++i) out << (i ? "," : "") << CsvField(columns[i]);
  out << '\n';
  std::vector<std::string> cells(columns.size());
  ForEachRow(samples_path, true, [&](const OJson& row) {
    for (std::string& c : cells) c.clear();
    for (auto& [key, cell] : FlattenJson(row)) {
      auto it = column_of.find(key);  // a key new since the first pass (a live run): left out
      if (it != column_of.end()) cells[it->second] = std::move(cell);
    }
    for (size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << CsvField(cells[i]);
    out << '\n';
  });
  if (!out) throw ConfigError("cannot write the CSV output");
}

}  // namespace tv

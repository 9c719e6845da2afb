// Reading the files of a run directory (meta.json, summary.json,
// samples.jsonl, events.jsonl) with limits. A run directory may sit in a runs
// directory that other users can write into, and trainvitals often reads it as
// root, so any of its files may be a FIFO, a device, a directory, a link to
// /dev/zero, a sparse file of gigabytes without a newline, or JSON nested
// 100,000 deep. Every command that reads a run directory reads it through
// here, so each of those ends in a clear error or a counted skip, in bounded
// memory and time, never a hang, a crash or a silent "0 rows":
//
//   - only a regular file is read: the open never blocks (O_NONBLOCK, so a
//     FIFO with no writer does not hang it) and fstat refuses anything else;
//   - a JSON document is at most kMaxJsonDocumentBytes;
//   - a JSONL line is at most kMaxJsonlLineBytes: a longer one is skipped
//     without being held in memory, and counted;
//   - JSON parsed with nlohmann is nested at most kMaxJsonDepth levels (a
//     cheap scan before parsing). The simdjson readers of samples.jsonl get
//     lines bounded by kMaxJsonlLineBytes and keep simdjson's own depth limit
//     (1024), which it enforces without recursion.
//
// Functions are thread-safe; a JsonlReader belongs to one thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/status.h"

namespace tv {

// Rows of samples.jsonl are a few kilobytes (a 64-process training with 8 GPUs
// writes under 100 KiB); 4 MiB leaves room for any row trainvitals writes.
inline constexpr size_t kMaxJsonlLineBytes = size_t{4} << 20;
// meta.json and summary.json are kilobytes (a summary of 10,000 epochs: a few
// MiB).
inline constexpr size_t kMaxJsonDocumentBytes = size_t{64} << 20;
// The deepest file trainvitals writes nests 6 levels (summary.json cost.epochs[].gpus[]).
inline constexpr int kMaxJsonDepth = 64;

// "4 MiB": a byte count as the limits above are written.
std::string LimitText(size_t bytes);

// What a file of st_mode `mode` is, in words: "a regular file", "a FIFO", "a
// directory", "a character device", "a block device", "a socket", "a symbolic link".
std::string_view FileKindName(unsigned mode);

// Opens `path` read-only (O_RDONLY|O_NONBLOCK|O_CLOEXEC) and checks with fstat
// that it is a regular file. A symbolic link is followed only when it is
// root's or the caller's, or its target has the link's owner (else Invalid:
// another user's link cannot lead root to a file that user could not read). On success *fd is
// the caller's to close. NotFound when `path` does not exist; Invalid "PATH is
// a FIFO, not a regular file" for anything else; the errno otherwise.
Status OpenRegularFile(const std::string& path, int* fd);

// The whole of regular file `path`, at most `max_bytes`: Invalid "PATH is
// larger than 64 MiB" beyond that (read no further), and the errors of
// OpenRegularFile.
Status ReadRegularFile(const std::string& path, size_t max_bytes, std::string* out);

// Whether `text`, read as JSON, opens more than `max_depth` arrays and objects
// inside one another (brackets inside strings do not count). Linear, no
// allocation; says nothing of whether `text` is valid JSON.
bool JsonNestedDeeperThan(std::string_view text, int max_depth);

// A JSON document of the run directory (meta.json, summary.json): read with
// ReadRegularFile(kMaxJsonDocumentBytes), refused when nested deeper than
// kMaxJsonDepth, then parsed. Messages name the file as `name` (default: the
// path): "NAME is not JSON", "NAME is nested deeper than 64 levels", and those
// of ReadRegularFile. NotFound when the file does not exist.
Status ReadJsonDocument(const std::string& path, nlohmann::json* out, std::string_view name = {});
Status ReadJsonDocument(const std::string& path, nlohmann::ordered_json* out,
                        std::string_view name = {});

// Parses one line of a JSONL file with nlohmann, depth-capped: false (and
// *why: "not JSON", "nested deeper than 64 levels") when it is not usable.
bool ParseJsonLine(std::string_view line, nlohmann::json* out, std::string* why);

// The lines of a JSONL file (samples.jsonl, events.jsonl), read in chunks:
// memory stays under max_line_bytes plus a chunk (1 MiB) whatever the file.
// A line longer than max_line_bytes is read past without being held, counted
// in long_lines() and never returned (the holes of a sparse file it runs
// through are skipped unread). Line numbers count every line, the
// skipped and empty ones too. Not thread-safe.
class JsonlReader {
 public:
  struct Line {
    std::string_view text;  // without its newline; valid until the next Next()
    size_t number = 0;      // 1-based
    bool cut = false;       // the last line, without a newline (a file still being written)
  };

  // `padding`: bytes readable after the end of every returned line (simdjson
  // reads up to SIMDJSON_PADDING bytes past a document).
  explicit JsonlReader(size_t max_line_bytes = kMaxJsonlLineBytes, size_t padding = 0);
  ~JsonlReader();
  JsonlReader(const JsonlReader&) = delete;
  JsonlReader& operator=(const JsonlReader&) = delete;

  // Opens `path` with OpenRegularFile; its errors.
  Status Open(const std::string& path);
  // Reads `text` instead of a file (tests, fuzzing); `text` must outlive the reader.
  void OpenText(std::string_view text);

  // The next non-empty line no longer than the cap; false at the end of the
  // file or on a read error (then status() says which).
  bool Next(Line* line);

  const Status& status() const { return status_; }
  size_t long_lines() const { return long_lines_; }
  size_t first_long_line() const { return first_long_line_; }  // its number; 0: none
  size_t max_line_bytes() const { return max_line_; }

 private:
  bool Fill();      // reads a chunk after end_; false at the end or on an error
  void SkipHole();  // while skipping a line: past a hole of a sparse file, unread

  size_t max_line_, padding_;
  int fd_ = -1;
  std::string path_;
  std::string_view text_;
  bool from_text_ = false, eof_ = false, skipping_ = false;
  std::string buffer_;
  size_t begin_ = 0, end_ = 0;  // unread bytes are buffer_[begin_, end_)
  size_t number_ = 0, long_lines_ = 0, first_long_line_ = 0;
  Status status_;
};

// "skipped 1 line longer than 4 MiB in PATH (line 3)", "skipped 2 lines ...
// (the first: line 3)"; empty when none was.
std::string LongLinesNote(const JsonlReader& reader, std::string_view path);

}  // namespace tv

// The time series a report draws, read from a run's samples.jsonl: one column
// per metric the charts show (per GPU for the GPU metrics), parallel to the
// rows' elapsed time. A metric no row holds has no column, so a chart without
// data is left out. Not thread-safe; a pure function of the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tv {

// What a column holds and where the page draws it.
struct SeriesSpec {
  std::string_view chart;  // "gpu_busy", "gpu_memory", "cpu", "memory", "power", "training"
  std::string_view label;  // legend text; "{gpu}" is replaced by "GPU N"
  std::string_view scale;  // the axis: "ratio", "bytes", "cores", "watts", "joules", "rate"
};

struct Series {
  const SeriesSpec* spec = nullptr;
  int gpu = -1;  // the GPU's index, -1 for the host, the job and the training
  // A training process's own series (training.ranks): its rank (-1: not
  // distributed) and pid; -1 and 0 for every other.
  bool per_rank = false;
  int rank = -1;
  int64_t pid = 0;
  std::string label;
  std::vector<float> values;  // NaN where the row lacks the metric
};

struct RunSeries {
  std::vector<double> elapsed_s;  // one per row
  std::optional<double> start_t;  // Unix time of elapsed 0: the first row's t - elapsed_s
  // Host, job and training series first, then per rank in rank (then pid)
  // order (at most kMaxRankSeries ranks, the first seen), then per GPU in
  // index order.
  std::vector<Series> series;
  size_t ranks_left_out = 0;    // ranks past kMaxRankSeries, not drawn
  size_t skipped = 0;           // lines that are not rows (the cut last line not counted)
  std::string first_skipped;    // "FILE:LINE: not JSON" (or why it is not a row) of the first
  size_t long_lines = 0;        // lines longer than kMaxJsonlLineBytes, skipped unread
  std::string long_lines_note;  // LongLinesNote (core/run_file.h); empty when none
};

// The most training processes of a run drawn one by one (steps per second and
// data wait each): the page stays readable and its data bounded.
inline constexpr size_t kMaxRankSeries = 64;

// Reads `path` (samples.jsonl) with simdjson through a JsonlReader
// (core/run_file.h: a regular file, lines capped): a 24-hour run of 8 GPUs
// (86,400 rows, ~850 MB) in well under 3 s. Throws std::runtime_error naming
// the file when it cannot be opened or read.
RunSeries ReadRunSeries(const std::string& path);

// The same from text (tests): `name` stands for the file in first_skipped.
RunSeries ParseRunSeries(std::string_view text, std::string_view name);

}  // namespace tv

// Replay: judges a run directory after the fact, through the same Analyzer the
// live run used (`trainvitals analyze`). Reads meta.json (the row interval),
// events.jsonl (what the training processes said) and samples.jsonl (the
// rows); a run still being written is judged up to its last complete row.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/findings/frame.h"
#include "analysis/findings/mark.h"
#include "analysis/findings/oom.h"
#include "analysis/findings/rules.h"
#include "analysis/findings/table.h"
#include "core/event.h"
#include "store/finding_record.h"
#include "store/health_record.h"
#include "store/memory_trend_record.h"
#include "store/meta_record.h"

namespace tv {

class Analyzer;

struct Verdict {
  std::vector<FindingRecord> findings;  // the worst first
  HealthRecord health;
  std::vector<MemoryTrendRecord> memory_trends;
  size_t rows = 0;
  bool ended = false;              // the run has ended (summary.json or an "end" event)
  size_t skipped = 0;              // lines of samples.jsonl or events.jsonl that were not usable
  std::string skipped_first;       // "FILE:LINE: not JSON" (or why it was not usable), the first
  std::vector<std::string> notes;  // lines over the length cap skipped, a meta.json left out
};

// What a run directory holds besides its rows: meta.json (the row interval,
// the host, the job) and what events.jsonl says (the training processes'
// marks in time order, how the job ended).
struct RunInputs {
  double interval_s = 1;
  MetaRecord meta;
  std::vector<Mark> marks;
  JobEnd job_end;
  bool ended = false;  // summary.json or an "end" event
};

// Reads them; lines it cannot use are counted in `v`, a meta.json it cannot
// use noted there. Throws std::runtime_error naming the file when `run_dir`
// holds no samples.jsonl, or when events.jsonl cannot be read.
RunInputs ReadRunInputs(const std::string& run_dir, Verdict* v);

// The rows of a run directory's samples.jsonl, one at a time, lines that are
// not rows counted in `v` (a last line still being written is left alone).
class RowReader {
 public:
  // Throws std::runtime_error naming the file when it cannot be read.
  RowReader(const std::string& run_dir, Verdict* v);
  ~RowReader();
  // Fills `frame` with the next row; false after the last (the note of lines
  // over the length cap, if any, then goes into the verdict).
  bool Next(Frame* frame);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One run directory judged a row at a time, for callers that read the rows
// themselves (joined.h reads several nodes' side by side): what Replay does.
class RunReplay {
 public:
  // Reads the inputs (ReadRunInputs' errors).
  RunReplay(const std::string& run_dir, const Thresholds& thresholds);
  // Over inputs already read, judged by `rules` (a job's nodes together:
  // joined.h); its rows come from the caller.
  RunReplay(RunInputs inputs, const Thresholds& thresholds, RuleChoice rules);
  ~RunReplay();
  const RunInputs& inputs() const { return inputs_; }
  // Where a RowReader of the run counts the lines it skips.
  Verdict* verdict() { return &verdict_; }
  // Judges the next row.
  void OnRow(const Frame& frame);
  double last_t() const { return last_t_; }  // the time of the last row judged
  // The verdict, once every row was judged (and the job's end, when it ended).
  Verdict Finish();

 private:
  Verdict verdict_;  // before inputs_: reading them counts into it
  RunInputs inputs_;
  std::unique_ptr<Analyzer> analyzer_;
  std::vector<Event> events_;  // the findings' own events, not needed here
  size_t next_mark_ = 0;
  double last_t_ = 0;
};

// Reads the files through core/run_file.h's limits, with the errors of
// ReadRunInputs and RowReader.
Verdict Replay(const std::string& run_dir, const Thresholds& thresholds);

}  // namespace tv

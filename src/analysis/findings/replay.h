// Replay: judges a run directory after the fact, through the same Analyzer the
// live run used (`trainvitals analyze`). Reads meta.json (the row interval),
// events.jsonl (what the training processes said) and samples.jsonl (the
// rows); a run still being written is judged up to its last complete row.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/findings/table.h"
#include "store/finding_record.h"
#include "store/health_record.h"
#include "store/memory_trend_record.h"

namespace tv {

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

// Reads the files through core/run_file.h's limits. Throws std::runtime_error
// naming the file when `run_dir` holds no samples.jsonl, or when samples.jsonl
// or events.jsonl is there but cannot be read (not a regular file).
Verdict Replay(const std::string& run_dir, const Thresholds& thresholds);

}  // namespace tv

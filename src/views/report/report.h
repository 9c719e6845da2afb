// `trainvitals report`: one self-contained HTML page of a run directory (and,
// to compare, of a second run overlaid; or of a job's nodes), written atomically.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "views/report/run_data.h"

namespace tv {

struct ReportRequest {
  std::string run_dir;
  std::string compare_dir;  // empty: no comparison
  std::string out;          // empty: <run_dir>/report.html
  size_t buckets = 1500;    // min/max buckets per series: ~2 points per pixel of a wide chart
  // What the caller judged or costed for each run with the run's own code
  // (run_data.h); empty: the page shows summary.json as the run wrote it.
  ReportJudged judged;
  ReportJudged compare_judged;
  // A job of several nodes (two or more; then run_dir and compare_dir are
  // unused): each node's directory and what was judged for it, and the job
  // as the caller judged it.
  std::vector<std::string> node_dirs;
  std::vector<ReportJudged> node_judged;
  ReportJob job;
};

struct ReportWritten {
  std::string path;
  size_t bytes = 0;
  size_t skipped_lines = 0;        // lines of samples.jsonl that are not JSON, every run
  std::string first_skipped;       // "FILE:LINE: not JSON" (or why it is not a row)
  std::vector<std::string> notes;  // lines over the length cap skipped (core/run_file.h)
};

// Reads the run(s) (or the job's nodes) and writes the page (a temporary file, then rename).
// Throws std::runtime_error saying what is wrong: a run that LoadReportRun
// refuses (run_data.h), a page that cannot be written.
ReportWritten WriteReport(const ReportRequest& request);

}  // namespace tv

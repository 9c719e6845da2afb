#include "run/run_end.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>

#include "core/clock.h"
#include "run/run_dir.h"
#include "sinks/jsonl_sink.h"
#include "views/report/report.h"

namespace tv {

RunSummary CollectSummary(const RunOutcome& outcome, const Row& run_row, const JsonlSink* jsonl,
                          const RunObservers& observers) {
  RunSummary summary = SummaryOf(outcome, run_row);
  if (jsonl && jsonl->rows_lost() > 0) {
    summary.rows_unwritten = static_cast<int64_t>(jsonl->rows_lost());
  }
  if (jsonl) summary.jsonl_error = jsonl->open_error();
  for (const SummaryPart* part : observers.InSummaryOrder()) part->AddTo(&summary);
  return summary;
}

bool WriteSummaryFile(const std::string& run_dir, const RunSummary& summary, double wait_s) {
  nlohmann::ordered_json json = RunSummaryJson(summary);
  std::string path = run_dir + "/summary.json";
  int err = 0;
  if (WriteJsonFile(path, json, /*say=*/true, &err)) return true;
  // A full disk or quota: the run's one summary is worth a short wait. Other
  // failures (a file size limit, a directory gone) do not pass with time.
  if (err != ENOSPC && err != EDQUOT) return false;
  fmt::print(stderr, "trainvitals: waiting up to {:.0f} s for space to write {}\n", wait_s, path);
  double deadline = Clock::Default()->MonotonicSeconds() + wait_s;
  while (Clock::Default()->MonotonicSeconds() < deadline) {
    ::usleep(250'000);
    if (WriteJsonFile(path, json, /*say=*/false)) {
      fmt::print(stderr, "trainvitals: wrote {}\n", path);
      return true;
    }
  }
  fmt::print(stderr, "trainvitals: gave up writing {}\n", path);
  return false;
}

void WriteRunReport(const std::string& run_dir, bool quiet) {
  try {
    ReportRequest request;
    request.run_dir = run_dir;
    ReportWritten written = WriteReport(request);
    if (!quiet) fmt::print(stderr, "trainvitals: report {}\n", written.path);
  } catch (const std::exception& e) {
    fmt::print(stderr, "trainvitals: no report: {}\n", e.what());
  }
}

}  // namespace tv

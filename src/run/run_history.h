// The run history's link to run directories: reads a finished run's
// summary.json and meta.json into a RunRecord (its cost computed when the
// summary predates cost accounting) and indexes it in runs.db or a team's
// PostgreSQL (store/run_index.h). Used when a run ends (Session::Finish) and by
// `trainvitals runs import`.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "analysis/cost.h"
#include "store/meta_record.h"
#include "store/run_index.h"
#include "store/run_summary.h"

namespace tv {

// The database `db` names (a file or a postgresql:// URL): itself, else
// DefaultRunIndexPath().
std::string RunIndexPath(const std::string& db);

// The record of run directory `dir`: its summary.json and meta.json (absent:
// an empty meta), keyed by its absolute path with symbolic links resolved.
// The summary's "cost", else BuildCost(summary, meta, rates). None with `*why`
// when `dir` holds no usable summary.json ("no summary.json", "summary.json is
// not JSON (...)").
std::optional<RunRecord> ReadRunDir(const std::string& dir, const CostRates& rates,
                                    std::string* why);

// The run history opened aside while the job runs, for its end to index
// into: opening an SQLite history reads its write-ahead log back (1 to 3 ms,
// growing with the log until its checkpoint at 1000 pages), which a short
// command's end would otherwise wait for. Open runs on a thread that is there
// anyway (the sink thread's first task), so no thread is added. An SQLite file
// only: a connection to a team's PostgreSQL is not held for a run's length.
//
// Thread safety: Open and Take from any thread, each once.
class HistoryOpening {
 public:
  explicit HistoryOpening(std::string db_path) : db_path_(std::move(db_path)) {}

  // Whether the history at `db_path` is opened aside: an SQLite file.
  static bool Applies(const std::string& db_path);

  // Opens the history; nothing once Take came first.
  void Open();
  // What Open opened, once (waiting while it opens); null when Open had not
  // begun, could not open it (the run's end opens it again and says why), or
  // the file was removed or replaced since.
  std::unique_ptr<RunIndex> Take();

 private:
  const std::string db_path_;
  std::mutex mu_;
  std::condition_variable opened_;
  enum class State { kWaiting, kOpening, kOpened, kTaken } state_ = State::kWaiting;
  std::unique_ptr<RunIndex> index_;
};

// Indexes the run that just wrote `summary` (and `meta`) into `run_dir`, in the
// database at `db_path` (`opened`: the history HistoryOpening opened, when it
// did; else it is opened here). Never throws and never stops the run: any
// failure (a database that is down included: its connection waits
// kConnectTimeoutS at most) is one stderr line, "trainvitals: run history: <db
// path, a URL's password masked>: <what>; this run is not indexed"; `runs
// import` brings the run in later.
void IndexFinishedRun(const std::string& db_path, const std::string& run_dir,
                      const RunSummary& summary, const MetaRecord& meta, const CostRates& rates,
                      std::unique_ptr<RunIndex> opened = nullptr);

// --since: Unix seconds of `text`, one of a duration back from `now_t` ("7d",
// "12h", "30m", "45s", "2w"), a date ("2026-11-30": its local midnight) or an
// ISO time ("2026-11-30T14:00", seconds optional, a space for the T allowed;
// local time unless it ends in "Z" or a "+01:00"-like offset). Throws
// ConfigError saying which forms it takes.
double ParseSince(std::string_view text, double now_t);

}  // namespace tv

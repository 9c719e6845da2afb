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
#include <thread>

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

// The run history written aside, on a thread of its own ("tv-history"),
// opened while the job runs and written while the run's end goes on. Opening
// an SQLite history reads its write-ahead log back (0.5 to 3 ms, growing with
// the log until its checkpoint at kCheckpointLogBytes) and a commit takes
// another half millisecond: a short command's end would otherwise wait for
// both. An SQLite file only: a connection to a team's PostgreSQL is not held
// for a run's length.
//
// Thread safety: one controlling thread; the work runs on the thread Start makes.
class HistoryAside {
 public:
  // The run to index, as IndexFinishedRun takes it.
  struct FinishedRun {
    std::string run_dir;
    RunSummary summary;
    MetaRecord meta;
    CostRates rates;
  };

  explicit HistoryAside(std::string db_path) : db_path_(std::move(db_path)) {}
  // Waits for the thread: the run handed to Index written, or (none handed)
  // the history closed unwritten.
  ~HistoryAside();
  HistoryAside(const HistoryAside&) = delete;
  HistoryAside& operator=(const HistoryAside&) = delete;

  // Whether the history at `db_path` is written aside: an SQLite file.
  static bool Applies(const std::string& db_path);

  // Opens the history on the thread, which then waits for Index. Where no
  // thread can be had, nothing: Index then opens and writes it.
  void Start();
  // Opens it on the calling thread instead (no Start).
  void Open();
  // Indexes `run` (IndexFinishedRun into the history opened; opened again when
  // it could not be, or the file was removed or replaced since): on the thread
  // when started, returning at once; else here. Once.
  void Index(FinishedRun run);

 private:
  void Serve();  // the thread: Open, then Write what Index hands over
  void Write(const FinishedRun& run);

  const std::string db_path_;
  std::mutex mu_;
  std::condition_variable handed_;
  std::unique_ptr<RunIndex> index_;
  std::optional<FinishedRun> run_;
  bool ending_ = false;
  std::thread thread_;
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

// JobSpool: `serve --spool DIR` keeps every job it served as a run directory
// (DESIGN.md's contract) and indexes it in the run history once it ended, so
// `trainvitals runs`, `runs stats --by user` and `report` answer for the
// node's jobs as for runs.
//
// A job's directory is made at its first row, <spool>/<stamp>-<kind>-<job>,
// private (0700) as a run's is: meta.json (the node's, with the job's
// identity, owner and GPUs), samples.jsonl (its rows, the job's figures and
// its share of its GPUs), events.jsonl (its findings, as they open and close).
// On the row it ends on (JobRow::summary) it writes summary.json, rewrites
// meta.json with every GPU it held, and indexes the run in `db`. A job still
// running when the agent stops keeps no summary.json, as a killed run does.
// What cannot be written is said once per job on stderr; the agent goes on.
//
// Thread safety: a Sink, used on the sink thread only.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis/cost.h"
#include "core/sink.h"
#include "sinks/jsonl_sink.h"
#include "store/meta_record.h"

namespace tv {

struct JobSpoolOptions {
  std::string dir;  // the spool: a directory of run directories
  std::string db;   // the run history the ended jobs are indexed in
  MetaRecord node;  // meta.json as the node has it; each job adds its own
  CostRates cost_rates;
};

class JobSpool final : public Sink {
 public:
  explicit JobSpool(JobSpoolOptions options) : options_(std::move(options)) {}
  void OnRow(const Row& row) override;
  void OnEvent(const Event& event) override;
  void OnClose() override;

 private:
  struct Spooled {
    std::string run_dir;  // empty: it could not be made (said once)
    std::unique_ptr<JsonlSink> jsonl;
    MetaRecord meta;
    const JobRow* last = nullptr;  // the row written last (an ended job's is served again)
    double last_row_t = 0;
    // Its summary.json, from the row it ended on: written at the next row,
    // once the events of that row (the findings closed at its end) are in.
    std::shared_ptr<const nlohmann::ordered_json> summary;
    bool done = false;
  };
  // Makes the job's directory and its meta.json; the run directory stays
  // empty (said once) when it cannot.
  void Open(const JobRow& job, Spooled* s);
  void Finish(Spooled* s);
  // The GPUs of `job`'s row added to its meta.json's.
  void AddGpus(const JobRow& job, MetaRecord* meta) const;

  JobSpoolOptions options_;
  std::map<std::string, Spooled> jobs_;                // by kind and job
  std::map<std::string, std::string> keys_;            // job id -> key, of the jobs spooled
  std::map<std::string, std::vector<Event>> pending_;  // by job id: events before its first row
};

}  // namespace tv

// LiveRecord: a running session's announcement for `trainvitals top`, the file
// <sessions dir>/<pid>.json (docs/cli.md "How sessions are found"): who the
// session is, and its latest health score, open findings, firing alerts and
// row. This file alone knows its keys: the session's LiveFile writes the head
// once and the live members at every row through it, and `top` reads the file
// back with LiveFromJson.
//
// Reading is lenient: a key of another type leaves its field unset (the first
// is named in the Status); the file counts as a session only with a whole
// `pid`.
//
// Thread-safe: plain data and pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/row.h"
#include "core/severity.h"
#include "core/status.h"
#include "store/run_totals.h"

namespace tv {

// Who a session is; written once, at its start.
struct LiveIdentity {
  int pid = 0;       // the monitoring process (trainvitals, or the training process itself)
  int job_pid = 0;   // the root of the job's process tree
  std::string mode;  // "run", "attach", "python"
  std::string name;  // the run's name
  std::vector<std::string> command;
  std::string run_dir;
  double start_t = 0;  // unix seconds
  double interval_s = 1;
  std::string socket;  // its marker socket (`trainvitals stacks` asks through it); empty: none
};

struct LiveRecord {
  LiveIdentity identity;
  std::optional<double> health_score;  // the run's so far
  struct Finding {
    std::string id;
    Severity severity = Severity::kWarning;
  };
  std::vector<Finding> findings;  // those open
  struct Alert {
    std::string name;
    std::string severity;
    std::optional<int> gpu;  // a per-GPU rule's GPU
  };
  std::vector<Alert> alerts;    // those firing
  std::optional<double> row_t;  // the latest row's time
  RunTotals row;                // its figures (a gauge's mean over the row)
};

// The head of the file: the identity's members, as the JSON object's text
// without its closing brace.
std::string LiveHeadText(const LiveIdentity& identity);
// Appends the live members of `row` (health score, open findings, firing
// alerts) and the key of the row itself, `,"row":`: the caller appends the
// row's samples.jsonl line and closes the object with `}`.
void AppendLiveState(const Row& row, std::string* text);

Status LiveFromJson(const nlohmann::json& j, LiveRecord* out);

}  // namespace tv

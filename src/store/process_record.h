// The processes of a run in summary.json (docs/schema.md "summary.json"):
// "processes", the processes of the job's tree that used the most CPU time
// and the most memory; "leaked", those still running when the command ended;
// "exception", what a training process said it died of. This file alone
// knows their keys: the process table (analysis/processes.h) fills the
// records and PutProcesses writes them; the summary text reads them back
// with ProcessesFromSummary.
//
// PutProcesses writes the keys of each record in the order trainvitals has
// always written them, a role only when known, and a part only when it is
// set. ProcessesFromSummary is lenient, as every view reads a summary: a
// value of another type leaves its field unset (the first is named in the
// Status), an entry that is not an object is left out, the rest is read.
//
// Thread-safe: plain data and pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace tv {

// One process of the job's tree. A leaked process has its pid, name,
// command and role only.
struct ProcessRecord {
  int pid = 0;
  std::optional<int> ppid;
  std::string role;  // "main", "launcher", "rank N", "DataLoader worker", "worker"; empty: unknown
  std::string name;
  std::string command;
  std::optional<double> cpu_seconds;
  std::optional<double> memory_bytes_max;
  std::optional<double> rss_bytes_max;
  std::optional<bool> exited;
};

// "processes": each list from the most to the least.
struct TopProcesses {
  std::vector<ProcessRecord> by_cpu;
  std::vector<ProcessRecord> by_memory;
};

// "exception": the first exception a training process said it died of.
struct ExceptionRecord {
  std::string type;
  std::string message;
  std::optional<int> pid;
  std::optional<int> rank;  // when distributed
};

struct RunProcesses {
  std::optional<TopProcesses> top;
  std::optional<std::vector<ProcessRecord>> leaked;  // once the command ended
  std::optional<ExceptionRecord> exception;
};

// Sets `summary`'s "processes", "leaked" and "exception", each when set.
void PutProcesses(const RunProcesses& processes, nlohmann::ordered_json* summary);

Status ProcessesFromSummary(const nlohmann::json& summary, RunProcesses* out);
Status ProcessesFromSummary(const nlohmann::ordered_json& summary, RunProcesses* out);

}  // namespace tv

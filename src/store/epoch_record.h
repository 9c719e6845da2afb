// EpochRecord and PhaseRecord: summary.json's `epochs[]` and `phases{}` and
// the `epoch` event of events.jsonl (docs/schema.md "Epoch records"), typed.
// This file alone knows their keys: the writer (analysis/phases.h) fills the
// structs and calls ToJson; every reader calls the FromJson functions and
// meets only fields of the types it expects.
//
// ToJson writes the keys in the order trainvitals has always written them,
// each only under its presence rule (an optional written only when set, a
// list only when non-empty, `complete` only when false), with the number form
// of its field (whole numbers as integers, the rest as doubles), so a record
// read and written back is byte for byte what the file held.
//
// FromJson takes a record as a file holds it: a key that is absent leaves its
// field unset (0 for the keys the writer always writes), a key of another type
// is an Invalid Status naming it and what it should hold ("key
// epochs[2].duration_s: expected a number, got a string"), keys it does not
// know are ignored (an event's "t" and "type" among them).
//
// Thread-safe: plain data and pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tv {

// One GPU over an epoch or a phase. Each figure is absent where the GPU did
// not report it; energy_joules only in epochs.
struct SpanGpu {
  int64_t index = 0;
  std::optional<int64_t> mig;  // the MIG instance, for a MIG device
  std::optional<double> util_ratio_mean;
  std::optional<int64_t> memory_used_bytes_max;
  std::optional<double> sm_active_ratio_mean;
  std::optional<int64_t> job_memory_bytes_max;
  std::optional<double> job_sm_util_ratio_mean;
  std::optional<int64_t> other_memory_bytes_max;
  std::optional<int64_t> allocator_peak_bytes;
  std::optional<double> temperature_celsius_max;
  std::optional<double> power_watts_mean;
  std::optional<double> energy_joules;
};

// What the job used over an epoch or a phase, each figure absent where it was
// not measured (data_wait_ratio is never a false 0: absent when no process
// timed its wait). cpu_energy_joules only in epochs.
struct SpanResources {
  std::optional<double> cpu_cores_mean;
  std::optional<int64_t> memory_bytes_max;
  std::optional<int64_t> host_memory_used_bytes_max;
  std::optional<double> data_wait_ratio;
  std::vector<SpanGpu> gpus;  // written only when not empty
  std::optional<double> cpu_energy_joules;
};

// One rank of an epoch several ranks took part in; duration and steps only
// when it ended the epoch.
struct EpochRank {
  int64_t rank = 0;
  std::optional<double> duration_s;
  std::optional<int64_t> steps;
};

struct EpochRecord {
  int64_t epoch = 0;
  double start_t = 0;  // unix seconds
  double duration_s = 0;
  int64_t steps = 0;
  std::optional<double> steps_per_second;  // only with steps and a duration
  std::optional<int64_t> call;
  std::optional<int64_t> planned_epochs;
  bool complete = true;  // written only when false
  SpanResources resources;
  // The lowest rank's logged loss and metrics, in the order logged; written
  // only when not empty. A value that is not finite (a NaN loss) is written as
  // null, and a null read back is absent (nullopt).
  std::vector<std::pair<std::string, std::optional<double>>> logs;
  std::vector<EpochRank> ranks;  // written only when not empty (several ranks)
};

struct PhaseRecord {
  double duration_s = 0;
  int64_t count = 0;  // the times it began
  std::optional<double> share;
  SpanResources resources;
};

// Phases by name, in the order summary.json lists them.
using PhaseRecords = std::vector<std::pair<std::string, PhaseRecord>>;

nlohmann::ordered_json ToJson(const EpochRecord& e);
nlohmann::ordered_json ToJson(const PhaseRecord& p);
// summary.json's "epochs" (an array) and "phases" (an object).
nlohmann::ordered_json EpochsToJson(std::span<const EpochRecord> epochs);
nlohmann::ordered_json PhasesToJson(const PhaseRecords& phases);

// One record (an element of "epochs", an `epoch` event's line, a member of
// "phases"). On error *out is unspecified; the message names the key as
// "key duration_s: ...".
Status EpochFromJson(const nlohmann::json& j, EpochRecord* out);
Status EpochFromJson(const nlohmann::ordered_json& j, EpochRecord* out);
Status PhaseFromJson(const nlohmann::json& j, PhaseRecord* out);
Status PhaseFromJson(const nlohmann::ordered_json& j, PhaseRecord* out);

// A summary's "epochs" and "phases" (none when the key is absent or null);
// messages name the key from the summary down ("key epochs[2].steps: ...",
// "key phases.eval.count: ...").
Status EpochsFromSummary(const nlohmann::json& summary, std::vector<EpochRecord>* out);
Status EpochsFromSummary(const nlohmann::ordered_json& summary, std::vector<EpochRecord>* out);
Status PhasesFromSummary(const nlohmann::json& summary, PhaseRecords* out);
Status PhasesFromSummary(const nlohmann::ordered_json& summary, PhaseRecords* out);

// The value `name` logged in the epoch; absent when not logged or null.
std::optional<double> Logged(const EpochRecord& e, std::string_view name);

// The GPU figures of a span's record, summed (energy) or averaged (a ratio)
// over its GPUs that have them: absent when none has.
std::optional<double> GpuMean(const SpanResources& r, std::optional<double> SpanGpu::*field);
std::optional<double> GpuSum(const SpanResources& r, std::optional<double> SpanGpu::*field);

}  // namespace tv

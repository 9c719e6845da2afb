// FindingLog: every finding the rules opened in a run, open or closed, and
// which rules applied to the run and had the evidence to judge it (for
// `not_judged`). The rules write it through their RuleContext (rule.h); the
// analyzer reads it for the findings list, the health score and Prometheus.
//
// Thread safety: none; the analyzer's thread owns it.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/findings/table.h"
#include "core/event.h"
#include "core/row.h"
#include "core/training_sample.h"
#include "store/finding_record.h"

namespace tv {

// What a rule says when its finding opens.
struct Opening {
  Severity severity = Severity::kWarning;
  Evidence evidence;
  std::string message;
  std::string advice;  // empty: the table's advice for the framework
};

// A finding the log holds: its entry in the findings table and its record
// (whose `id` is the entry's name; `closed_t` none while open, or open at the
// run's end; `duration_s` set when it closes).
struct LoggedFinding {
  FindingId id;
  FindingRecord record;
};

class FindingLog {
 public:
  // Records a finding opened at `t` and appends its finding_open event;
  // returns its index.
  int Open(FindingId id, double t, Framework framework, const FindingSubject& subject,
           Opening opening, std::vector<Event>* events);
  // Closes the finding at `index` and appends its finding_close event.
  void Close(int index, double t, std::vector<Event>* events);

  // The rule of `id` applies to this run / has had the evidence to judge it.
  void Want(FindingId id) { judge_[static_cast<size_t>(id)] |= 1; }
  void Judging(FindingId id) { judge_[static_cast<size_t>(id)] |= 3; }
  // Whether `id` applies but has not been judged yet.
  bool Waiting(FindingId id) const { return judge_[static_cast<size_t>(id)] == 1; }

  // Adds `evidence` to the finding at `index` (replacing entries of the same
  // name), makes `message` its message and, when not empty, `advice` its
  // advice: what was learnt after it opened (the stacks of a stalled
  // process). Its finding_open event stays as it was.
  void Amend(int index, const Evidence& evidence, std::string message, std::string advice);

  // The latest finding of `id` still open; -1 when none is.
  int LatestOpen(FindingId id) const;

  // The findings opened since the last call, for what acts on them (the
  // stacks of a stalled job).
  std::vector<std::pair<FindingId, FindingSubject>> TakeOpened() {
    return std::exchange(opened_, {});
  }

  // A rule that needs a profile to judge `id` asks for one (input-bound when
  // nothing measures the wait); the asks since the last call.
  void Probe(FindingId id) { probes_.push_back(id); }
  std::vector<FindingId> TakeProbes() { return std::exchange(probes_, {}); }

  void AddRisk(const MemoryRisk& risk) { risks_.push_back(risk); }
  std::vector<MemoryRisk> TakeRisks() { return std::exchange(risks_, {}); }

  const std::vector<LoggedFinding>& records() const { return records_; }
  // Every finding, the worst first (severity, then share of the run up to
  // `end_t`), with its duration to its close or to `end_t`.
  std::vector<FindingRecord> Sorted(double end_t) const;
  // Each finding id opened so far, in the order first opened: whether one is
  // open now and its worst severity.
  void States(std::vector<Row::Finding>* out) const;
  // The ids that apply but have not been judged, in table order.
  void NotJudged(std::vector<std::string_view>* out) const;

 private:
  std::vector<LoggedFinding> records_;
  std::array<uint8_t, kFindingCount> judge_{};  // bit 0: applies; bit 1: judged
  std::vector<MemoryRisk> risks_;
  std::vector<std::pair<FindingId, FindingSubject>> opened_;
  std::vector<FindingId> probes_;
};

}  // namespace tv

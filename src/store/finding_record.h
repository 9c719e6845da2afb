// FindingRecord: one finding as summary.json's `findings` holds it, and the
// one place that knows its JSON keys (docs/schema.md): the analysis writes
// findings and their finding_open / finding_close events through it, and the
// views, the run history and the CLI read them back through it. Reading
// checks each key it knows and names the first that is wrong ("key
// subject.gpu: expected an integer, got 1.5"); keys it does not know are
// left out, ids it does not know (a run written by a newer version) are kept.
// Pure data and pure functions; thread-safe.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/event_type.h"
#include "core/severity.h"
#include "core/status.h"

namespace tv {

// Whom a finding is about: the whole job ({}), a GPU ({"gpu": N}), a training
// process ({"rank": N, "pid": P}; {"pid": P} without ranks; {"rank": N} where
// the rank is what is known, as straggler says) or a memory figure
// ({"memory": "job"} or {"memory": "host"}). A job judged across nodes
// (joined.h) adds the node each is on ({"rank": 3, "node": "gpu-b"}).
struct FindingSubject {
  enum class Kind { kJob, kGpu, kProcess, kMemory };
  enum class Memory { kJob, kHost };

  static FindingSubject Job() { return {}; }
  static FindingSubject Gpu(int index) { return {.kind = Kind::kGpu, .gpu = index}; }
  static FindingSubject Process(std::optional<int> rank, std::optional<int> pid) {
    return {.kind = Kind::kProcess, .rank = rank, .pid = pid};
  }
  static FindingSubject MemoryOf(Memory memory) {
    return {.kind = Kind::kMemory, .memory = memory};
  }

  Kind kind = Kind::kJob;
  int gpu = -1;                  // kGpu: the GPU's index
  std::optional<int> rank;       // kProcess: its rank, when the job has ranks
  std::optional<int> pid;        // kProcess: its pid, when known (one of the two is)
  Memory memory = Memory::kJob;  // kMemory
  std::string node;              // the node it is on, in a job of several; empty: the run's own

  bool operator==(const FindingSubject&) const = default;
};

// One value of a finding's evidence: a number (an integer stays one, "0" and
// not "0.0", so a value reads back as written), a string (oom's `killed_by`,
// a memory trend's `verdict`), or other JSON kept whole (oom's `memory`: its
// trail of memory figures).
class EvidenceValue {
 public:
  template <std::integral T>
  requires(!std::same_as<T, bool>) EvidenceValue(T v)
      : value_(static_cast<int64_t>(v)) {}  // NOLINT: implicit by design
  template <std::floating_point T>
  EvidenceValue(T v) : value_(static_cast<double>(v)) {}    // NOLINT
  EvidenceValue(std::string v) : value_(std::move(v)) {}    // NOLINT
  EvidenceValue(const char* v) : value_(std::string(v)) {}  // NOLINT
  // A JSON number or string becomes one; anything else stays JSON.
  EvidenceValue(const nlohmann::ordered_json& v);  // NOLINT

  // The number, else nullopt.
  std::optional<double> number() const;
  // The string, else nullptr.
  const std::string* text() const;
  nlohmann::ordered_json Json() const;

  bool operator==(const EvidenceValue&) const = default;

 private:
  std::variant<int64_t, double, std::string, nlohmann::ordered_json> value_;
};

// The evidence of a finding: named values in the order the rule wrote them.
class Evidence {
 public:
  using Entry = std::pair<std::string, EvidenceValue>;

  Evidence() = default;
  Evidence(std::initializer_list<Entry> entries) : entries_(entries) {}

  // The value named `name`, appended when there is none yet.
  EvidenceValue& operator[](std::string_view name);
  // The value named `name`, else nullptr.
  const EvidenceValue* Find(std::string_view name) const;
  const std::vector<Entry>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

  bool operator==(const Evidence&) const = default;

 private:
  std::vector<Entry> entries_;
};

struct FindingRecord {
  std::string id;  // "input-bound"; docs/findings.md lists those this version knows
  Severity severity = Severity::kWarning;
  double opened_t = 0;             // Unix seconds
  std::optional<double> closed_t;  // none: still open at the run's end
  double duration_s = 0;           // to closed_t, else to the run's end
  FindingSubject subject;
  Evidence evidence;
  std::string message;
  std::vector<std::string> advice;

  bool operator==(const FindingRecord&) const = default;
};

// {} / {"gpu": 1} / {"rank": 2, "pid": 412} / {"memory": "job"}.
nlohmann::ordered_json SubjectJson(const FindingSubject& subject);
// The subject `j` holds; an error naming the key when it holds none of the
// shapes above. `at` names `j` in the error ("subject").
Status SubjectFromJson(const nlohmann::ordered_json& j, FindingSubject* out,
                       std::string_view at = "subject");
Status SubjectFromJson(const nlohmann::json& j, FindingSubject* out,
                       std::string_view at = "subject");
// "GPU 1", "rank 2", "pid 412" ("rank 2 on gpu-b" with a node); empty for the
// job and for a memory figure (the finding's message names it; "gpu-b" alone
// with a node).
std::string SubjectWords(const FindingSubject& subject);

// The evidence as a JSON object, in its order; and back from one.
nlohmann::ordered_json EvidenceJson(const Evidence& evidence);
Evidence EvidenceFromJson(const nlohmann::ordered_json& object);

// The finding as summary.json holds it: id, severity, opened_t, closed_t
// (only when closed), duration_s, subject, evidence, message, advice.
nlohmann::ordered_json FindingJson(const FindingRecord& finding);
// A list of them, in their order.
nlohmann::ordered_json FindingsJson(const std::vector<FindingRecord>& findings);

// Reads one finding. `id` and `severity` are required; every other key
// takes its default when absent (files written by trainvitals hold them all).
// A key present with the wrong type, a severity other than info, warning or
// critical, or a subject of another shape is an error:
// "key severity: expected info, warning or critical, got \"fatal\"".
Status FindingFromJson(const nlohmann::ordered_json& j, FindingRecord* out);
Status FindingFromJson(const nlohmann::json& j, FindingRecord* out);
// Reads summary.json's `findings` array; an error names the element
// ("key findings[1].severity: ...") and leaves `out` with those before it.
Status FindingsFromJson(const nlohmann::ordered_json& array, std::vector<FindingRecord>* out);
Status FindingsFromJson(const nlohmann::json& array, std::vector<FindingRecord>* out);
// Reads a summary's `findings` as every view shows them: each finding that can
// be read, in order; the first that cannot is named in the Status and left
// out, as is every other such. None when the summary has no `findings`.
Status FindingsFromSummary(const nlohmann::ordered_json& summary, std::vector<FindingRecord>* out);
Status FindingsFromSummary(const nlohmann::json& summary, std::vector<FindingRecord>* out);

// The further keys of a finding's event (after events.jsonl's `t` and
// `type`): finding_open holds id, severity, subject, evidence, message and
// advice; finding_close holds id, subject and duration_s. `type` is one of
// the two.
nlohmann::ordered_json FindingEventFields(EventType type, const FindingRecord& finding);
// Reads a line of events.jsonl of type finding_open (its `t` is opened_t) or
// finding_close (its `t` is closed_t); other keys as FindingFromJson.
Status FindingFromEvent(const nlohmann::ordered_json& line, FindingRecord* out);

}  // namespace tv

#include "store/finding_record.h"

#include <fmt/format.h>

#include <limits>

#include "core/json_shape.h"
#include "store/record_json.h"

namespace tv {
namespace {

// The keys of a finding: written here and read here only.
constexpr std::string_view kId = "id";
constexpr std::string_view kOpened = "opened_t";
constexpr std::string_view kClosed = "closed_t";
constexpr std::string_view kDuration = "duration_s";
constexpr std::string_view kSubject = "subject";
constexpr std::string_view kEvidence = "evidence";
constexpr std::string_view kAdvice = "advice";
// A subject's keys.
constexpr std::string_view kRank = "rank";
constexpr std::string_view kMemory = "memory";
constexpr std::string_view kNode = "node";

// The types each key of a finding may hold where present; checked before
// any is read, so the readers below meet only these.
constexpr JsonRule kFindingShape[] = {
    {"", kJsonObject},         {"id", kJsonString},       {"severity", kJsonString},
    {"opened_t", kJsonNumber}, {"closed_t", kJsonNumber}, {"duration_s", kJsonNumber},
    {"subject", kJsonObject},  {"evidence", kJsonObject}, {"message", kJsonString},
    {"advice", kJsonArray},    {"advice[]", kJsonString},
};

constexpr JsonRule kEventShape[] = {
    {"t", kJsonNumber},
    {"type", kJsonString},
};

Status KeyError(std::string_view at, std::string_view what) {
  return Status::Invalid(fmt::format("key {}: {}", at, what));
}

// "key subject.gpu: ..." for an error "key gpu: ..." found below `at`.
Status Below(std::string_view at, const Status& s) {
  constexpr std::string_view kKey = "key ";
  std::string_view m = s.message();
  if (m.substr(0, kKey.size()) == kKey) {
    return Status::Invalid(fmt::format("key {}.{}", at, m.substr(kKey.size())));
  }
  return Status::Invalid(fmt::format("key {}: {}", at, m));
}

template <typename Json>
const Json* Get(const Json& j, std::string_view key) {
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

// The integer at `key` of `j` (an object), which must fit an int.
template <typename Json>
Status IntAt(const Json& j, std::string_view key, std::string_view at, int* out) {
  const Json* v = Get(j, key);
  std::string where = fmt::format("{}.{}", at, key);
  if (v == nullptr) return KeyError(where, "missing, expected an integer");
  if (v->is_number_integer()) {
    auto n = v->template get<int64_t>();
    if (v->is_number_unsigned() && v->template get<uint64_t>() > INT64_MAX) {
      n = INT64_MAX;
    }
    if (n >= std::numeric_limits<int>::min() && n <= std::numeric_limits<int>::max()) {
      *out = static_cast<int>(n);
      return Status::Ok();
    }
  }
  return KeyError(where, fmt::format("expected an integer, got {}", v->dump()));
}

template <typename Json>
Status ReadSubject(const Json& j, FindingSubject* out, std::string_view at) {
  constexpr std::string_view kShapes =
      R"(expected {}, {"gpu": N}, {"rank": N, "pid": P}, {"rank": N}, {"pid": P} or {"memory": "job"|"host"}, each with an optional "node": "NAME")";
  if (!j.is_object()) return KeyError(at, kShapes);
  FindingSubject s;
  auto has = [&](std::string_view key) { return j.contains(key); };
  size_t known = 0;
  if (has(kGpu)) {
    s.kind = FindingSubject::Kind::kGpu;
    if (Status st = IntAt(j, kGpu, at, &s.gpu); !st.ok()) return st;
    known = 1;
  } else if (has(kPid) || has(kRank)) {
    s.kind = FindingSubject::Kind::kProcess;
    for (auto [key, field] : {std::pair{kRank, &s.rank}, std::pair{kPid, &s.pid}}) {
      if (!has(key)) continue;
      int n = 0;
      if (Status st = IntAt(j, key, at, &n); !st.ok()) return st;
      *field = n;
      ++known;
    }
  } else if (has(kMemory)) {
    s.kind = FindingSubject::Kind::kMemory;
    const Json& m = *Get(j, kMemory);
    if (m == "job") {
      s.memory = FindingSubject::Memory::kJob;
    } else if (m == "host") {
      s.memory = FindingSubject::Memory::kHost;
    } else {
      return KeyError(fmt::format("{}.memory", at),
                      fmt::format(R"(expected "job" or "host", got {})", m.dump()));
    }
    known = 1;
  }
  if (has(kNode)) {
    const Json& node = *Get(j, kNode);
    if (!node.is_string()) {
      return KeyError(fmt::format("{}.node", at),
                      fmt::format("expected a string, got {}", node.dump()));
    }
    s.node = node.template get<std::string>();
    ++known;
  }
  if (j.size() != known) return KeyError(at, fmt::format("{}, got {}", kShapes, j.dump()));
  *out = s;
  return Status::Ok();
}

// Reads the keys a finding and its events share; `need_severity`: whether
// `severity` is required (finding_close has none).
template <typename Json>
Status Read(const Json& j, bool need_severity, FindingRecord* out) {
  if (std::string e = JsonShapeError(j, kFindingShape); !e.empty()) return Status::Invalid(e);
  FindingRecord r;
  const Json* v = Get(j, kId);
  if (v == nullptr) return KeyError(kId, "missing, expected a string");
  r.id = v->template get<std::string>();
  if ((v = Get(j, kSeverity)) != nullptr) {
    auto name = v->template get<std::string>();
    std::optional<Severity> s = ParseSeverity(name);
    if (!s)
      return KeyError(kSeverity,
                      fmt::format("expected info, warning or critical, got {}", v->dump()));
    r.severity = *s;
  } else if (need_severity) {
    return KeyError(kSeverity, "missing, expected info, warning or critical");
  }
  if ((v = Get(j, kOpened)) != nullptr) r.opened_t = v->template get<double>();
  if ((v = Get(j, kClosed)) != nullptr) r.closed_t = v->template get<double>();
  if ((v = Get(j, kDuration)) != nullptr) r.duration_s = v->template get<double>();
  if ((v = Get(j, kSubject)) != nullptr) {
    if (Status s = ReadSubject(*v, &r.subject, kSubject); !s.ok()) return s;
  }
  if ((v = Get(j, kEvidence)) != nullptr) r.evidence = EvidenceFromJson(nlohmann::ordered_json(*v));
  if ((v = Get(j, kMessage)) != nullptr) r.message = v->template get<std::string>();
  if ((v = Get(j, kAdvice)) != nullptr) {
    for (const auto& a : *v) r.advice.push_back(a.template get<std::string>());
  }
  *out = std::move(r);
  return Status::Ok();
}

template <typename Json>
Status ReadAll(const Json& array, std::vector<FindingRecord>* out) {
  out->clear();
  if (!array.is_array()) return KeyError("findings", "expected an array");
  for (size_t i = 0; i < array.size(); ++i) {
    FindingRecord r;
    if (Status s = FindingFromJson(array[i], &r); !s.ok()) {
      return Below(fmt::format("findings[{}]", i), s);
    }
    out->push_back(std::move(r));
  }
  return Status::Ok();
}

template <typename Json>
Status ReadEach(const Json& summary, std::vector<FindingRecord>* out) {
  out->clear();
  if (!summary.is_object()) return Status::Invalid("the summary is not a JSON object");
  auto it = summary.find("findings");
  if (it == summary.end() || it->is_null()) return Status::Ok();
  if (!it->is_array()) return KeyError("findings", "expected an array");
  Status first = Status::Ok();
  for (size_t i = 0; i < it->size(); ++i) {
    FindingRecord r;
    if (Status s = FindingFromJson((*it)[i], &r); !s.ok()) {
      if (first.ok()) first = Below(fmt::format("findings[{}]", i), s);
      continue;
    }
    out->push_back(std::move(r));
  }
  return first;
}

}  // namespace

EvidenceValue::EvidenceValue(const nlohmann::ordered_json& v) : value_(v) {
  if (v.is_number_float()) {
    value_ = v.get<double>();
  } else if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() <= INT64_MAX) value_ = v.get<int64_t>();
  } else if (v.is_number_integer()) {
    value_ = v.get<int64_t>();
  } else if (v.is_string()) {
    value_ = v.get<std::string>();
  }
}

std::optional<double> EvidenceValue::number() const {
  if (const auto* i = std::get_if<int64_t>(&value_)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&value_)) return *d;
  return std::nullopt;
}

const std::string* EvidenceValue::text() const { return std::get_if<std::string>(&value_); }

nlohmann::ordered_json EvidenceValue::Json() const {
  return std::visit([](const auto& v) { return nlohmann::ordered_json(v); }, value_);
}

EvidenceValue& Evidence::operator[](std::string_view name) {
  for (Entry& e : entries_) {
    if (e.first == name) return e.second;
  }
  entries_.emplace_back(std::string(name), EvidenceValue(int64_t{0}));
  return entries_.back().second;
}

const EvidenceValue* Evidence::Find(std::string_view name) const {
  for (const Entry& e : entries_) {
    if (e.first == name) return &e.second;
  }
  return nullptr;
}

nlohmann::ordered_json SubjectJson(const FindingSubject& s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  switch (s.kind) {
    case FindingSubject::Kind::kJob:
      break;
    case FindingSubject::Kind::kGpu:
      j[kGpu] = s.gpu;
      break;
    case FindingSubject::Kind::kProcess:
      if (s.rank) j[kRank] = *s.rank;
      if (s.pid) j[kPid] = *s.pid;
      break;
    case FindingSubject::Kind::kMemory:
      j[kMemory] = s.memory == FindingSubject::Memory::kHost ? "host" : "job";
      break;
  }
  if (!s.node.empty()) j[kNode] = s.node;
  return j;
}

Status SubjectFromJson(const nlohmann::ordered_json& j, FindingSubject* out, std::string_view at) {
  return ReadSubject(j, out, at);
}

Status SubjectFromJson(const nlohmann::json& j, FindingSubject* out, std::string_view at) {
  return ReadSubject(j, out, at);
}

std::string SubjectWords(const FindingSubject& s) {
  std::string words;
  switch (s.kind) {
    case FindingSubject::Kind::kGpu:
      words = fmt::format("GPU {}", s.gpu);
      break;
    case FindingSubject::Kind::kProcess:
      if (s.rank) {
        words = fmt::format("rank {}", *s.rank);
      } else if (s.pid) {
        words = fmt::format("pid {}", *s.pid);
      }
      break;
    case FindingSubject::Kind::kMemory:
    case FindingSubject::Kind::kJob:
      break;
  }
  if (s.node.empty()) return words;
  return words.empty() ? s.node : words + " on " + s.node;
}

nlohmann::ordered_json EvidenceJson(const Evidence& evidence) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, value] : evidence.entries()) j[name] = value.Json();
  return j;
}

Evidence EvidenceFromJson(const nlohmann::ordered_json& object) {
  Evidence e;
  if (!object.is_object()) return e;
  for (const auto& [name, value] : object.items()) e[name] = EvidenceValue(value);
  return e;
}

nlohmann::ordered_json FindingJson(const FindingRecord& f) {
  nlohmann::ordered_json j = {
      {kId, f.id}, {kSeverity, SeverityName(f.severity)}, {kOpened, f.opened_t}};
  if (f.closed_t) j[kClosed] = *f.closed_t;
  j[kDuration] = f.duration_s;
  j[kSubject] = SubjectJson(f.subject);
  j[kEvidence] = EvidenceJson(f.evidence);
  j[kMessage] = f.message;
  j[kAdvice] = f.advice;
  return j;
}

nlohmann::ordered_json FindingsJson(const std::vector<FindingRecord>& findings) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const FindingRecord& f : findings) out.push_back(FindingJson(f));
  return out;
}

Status FindingFromJson(const nlohmann::ordered_json& j, FindingRecord* out) {
  return Read(j, /*need_severity=*/true, out);
}

Status FindingFromJson(const nlohmann::json& j, FindingRecord* out) {
  return Read(j, /*need_severity=*/true, out);
}

Status FindingsFromJson(const nlohmann::ordered_json& array, std::vector<FindingRecord>* out) {
  return ReadAll(array, out);
}

Status FindingsFromJson(const nlohmann::json& array, std::vector<FindingRecord>* out) {
  return ReadAll(array, out);
}

Status FindingsFromSummary(const nlohmann::ordered_json& summary, std::vector<FindingRecord>* out) {
  return ReadEach(summary, out);
}

Status FindingsFromSummary(const nlohmann::json& summary, std::vector<FindingRecord>* out) {
  return ReadEach(summary, out);
}

nlohmann::ordered_json FindingEventFields(EventType type, const FindingRecord& f) {
  if (type == EventType::kFindingClose) {
    return {{kId, f.id}, {kSubject, SubjectJson(f.subject)}, {kDuration, f.duration_s}};
  }
  return {{kId, f.id},
          {kSeverity, SeverityName(f.severity)},
          {kSubject, SubjectJson(f.subject)},
          {kEvidence, EvidenceJson(f.evidence)},
          {kMessage, f.message},
          {kAdvice, f.advice}};
}

Status FindingFromEvent(const nlohmann::ordered_json& line, FindingRecord* out) {
  if (std::string e = JsonShapeError(line, kEventShape); !e.empty()) return Status::Invalid(e);
  const nlohmann::ordered_json* t = Get(line, kEventT);
  const nlohmann::ordered_json* type = Get(line, kEventType);
  if (t == nullptr) return KeyError(kEventT, "missing, expected a number");
  bool open = type != nullptr && *type == EventTypeName(EventType::kFindingOpen);
  bool close = type != nullptr && *type == EventTypeName(EventType::kFindingClose);
  if (!open && !close) return KeyError(kEventType, "expected finding_open or finding_close");
  FindingRecord r;
  if (Status s = Read(line, /*need_severity=*/open, &r); !s.ok()) return s;
  if (open) {
    r.opened_t = t->get<double>();
  } else {
    r.closed_t = t->get<double>();
  }
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace tv

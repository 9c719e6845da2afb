#include "store/job_end_event.h"

#include <climits>

#include "core/json_read.h"
#include "store/record_json.h"

namespace tv {
namespace {

constexpr std::string_view kExitCode = "exit_code";
constexpr std::string_view kCgroup = "cgroup";

// A whole number that fits an int (core/json_read.h's JsonInt, narrowed).
template <typename Json>
std::optional<int> WholeInt(const Json& j, std::string_view key) {
  std::optional<int64_t> v = JsonInt(j, key);
  if (!v || *v < INT_MIN || *v > INT_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

template <typename Json>
EndEvent ReadEnd(const Json& j) {
  EndEvent e;
  e.exit_code = WholeInt(j, kExitCode);
  e.signal = WholeInt(j, kSignal);
  return e;
}

}  // namespace

nlohmann::ordered_json EndEventFields(const EndEvent& e) {
  nlohmann::ordered_json fields = {
      {kExitCode, e.exit_code ? nlohmann::ordered_json(*e.exit_code) : nlohmann::ordered_json()}};
  if (e.signal) fields[kSignal] = *e.signal;
  return fields;
}

nlohmann::ordered_json OomKillEventFields(const OomKillEvent& e) {
  return {{kCount, e.count}, {kCgroup, e.cgroup}};
}

EndEvent EndEventFromFields(const nlohmann::ordered_json& fields) { return ReadEnd(fields); }

bool EndEventFromJson(const nlohmann::json& line, EndEvent* out) {
  if (EventLineType(line) != EventType::kEnd) return false;
  *out = ReadEnd(line);
  return true;
}

bool OomKillEventFromJson(const nlohmann::json& line, OomKillEvent* out) {
  if (EventLineType(line) != EventType::kOomKill) return false;
  OomKillEvent e;
  auto count = line.find(kCount);
  if (count != line.end() && count->is_number_unsigned()) e.count = count->get<uint64_t>();
  e.cgroup = JsonString(line, kCgroup).value_or("");
  *out = std::move(e);
  return true;
}

}  // namespace tv

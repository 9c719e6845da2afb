#include "store/job_end_event.h"

#include <climits>

#include "store/record_json.h"

namespace tv {
namespace {

constexpr std::string_view kExitCode = "exit_code";
constexpr std::string_view kCgroup = "cgroup";

template <typename Json>
std::optional<int> WholeInt(const Json& j, std::string_view key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned()) {
    auto v = it->template get<uint64_t>();
    return v <= INT_MAX ? std::optional<int>(static_cast<int>(v)) : std::nullopt;
  }
  auto v = it->template get<int64_t>();
  return v >= INT_MIN && v <= INT_MAX ? std::optional<int>(static_cast<int>(v)) : std::nullopt;
}

template <typename Json>
EndEvent ReadEnd(const Json& j) {
  EndEvent e;
  if (!j.is_object()) return e;
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
  auto cgroup = line.find(kCgroup);
  if (cgroup != line.end() && cgroup->is_string()) e.cgroup = cgroup->get<std::string>();
  *out = std::move(e);
  return true;
}

}  // namespace tv

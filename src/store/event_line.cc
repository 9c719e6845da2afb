#include "store/event_line.h"

#include <cmath>
#include <string>

namespace tv {
namespace {

template <typename Json>
std::optional<EventType> LineType(const Json& line) {
  if (!line.is_object()) return std::nullopt;
  auto type = line.find(kEventType);
  auto t = line.find(kEventT);
  if (type == line.end() || !type->is_string() || t == line.end() || !t->is_number()) {
    return std::nullopt;
  }
  return ParseEventType(type->template get_ref<const std::string&>());
}

}  // namespace

std::optional<EventType> EventLineType(const nlohmann::json& line) { return LineType(line); }
std::optional<EventType> EventLineType(const nlohmann::ordered_json& line) {
  return LineType(line);
}

nlohmann::ordered_json EventLineJson(const Event& event) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j[kEventT] = std::round(event.t * 1000) / 1000;
  j[kEventType] = EventTypeName(event.type);
  for (const auto& [key, value] : event.fields.items()) j[key] = value;
  return j;
}

}  // namespace tv

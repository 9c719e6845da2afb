#include "analysis/findings/mark.h"

namespace tv {

bool MarkFromEvent(const nlohmann::json& e, Mark* m) {
  if (!e.is_object()) return false;
  auto type = e.find("type");
  auto t = e.find("t");
  if (type == e.end() || !type->is_string() || t == e.end() || !t->is_number()) return false;
  std::optional<EventType> kind = ParseEventType(type->get_ref<const std::string&>());
  switch (kind.value_or(EventType::kStart)) {
    case EventType::kClientStart:
    case EventType::kClientEnd:
    case EventType::kEpochBegin:
    case EventType::kEpochEnd:
    case EventType::kPhaseBegin:
    case EventType::kPhaseEnd:
      m->type = *kind;
      break;
    default:
      return false;
  }
  m->t = t->get<double>();
  auto number = [&e](const char* key) -> std::optional<int64_t> {
    auto it = e.find(key);
    if (it == e.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int64_t>();
  };
  auto text = [&e](const char* key) -> std::string {
    auto it = e.find(key);
    return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  m->pid = static_cast<int>(number("pid").value_or(0));
  m->rank = static_cast<int>(number("rank").value_or(-1));
  m->epoch = number("epoch");
  m->planned_epochs = number("epochs");
  m->call = number("call");
  m->phase = text("phase");
  m->framework = text("framework");
  m->exception = text("exception");
  m->message = text("message");
  return true;
}

}  // namespace tv

// Event: something that happened at one instant (lifecycle, a process joining
// the tree, a source going quiet, a marker, an alert). One line of events.jsonl.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/event_type.h"

namespace tv {

struct Event {
  double t = 0;                        // unix seconds
  EventType type = EventType::kStart;  // its name in events.jsonl: EventTypeName
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();  // further keys, in order
};

}  // namespace tv

// Event: something that happened at one instant (lifecycle, a process joining
// the tree, a source going quiet, a marker, an alert). One line of events.jsonl.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tv {

struct Event {
  double t = 0;      // unix seconds
  std::string type;  // "start", "end", "process_start", "source_unavailable", ...
  nlohmann::ordered_json fields = nlohmann::ordered_json::object();  // further keys, in order
};

}  // namespace tv

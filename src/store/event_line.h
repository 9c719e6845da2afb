// A line of events.jsonl (docs/schema.md "events.jsonl"): its time `t`, its
// `type` and the event's further keys. This file alone knows the two keys
// every line has: the JSONL sink writes each event through EventLineJson, and
// a reader of events.jsonl asks a line's type with EventLineType before it
// hands the line to the record of that type.
//
// Thread-safe: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "core/event.h"
#include "core/event_type.h"

namespace tv {

constexpr std::string_view kEventT = "t";
constexpr std::string_view kEventType = "type";

// The type of a line of events.jsonl: none when it is not an object with a
// known `type` and a numeric `t`.
std::optional<EventType> EventLineType(const nlohmann::json& line);
std::optional<EventType> EventLineType(const nlohmann::ordered_json& line);

// The line of `event`: `t` (to the millisecond), `type`, then its fields.
nlohmann::ordered_json EventLineJson(const Event& event);

}  // namespace tv

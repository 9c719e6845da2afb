// The events that say how the job ended (docs/schema.md "events.jsonl"): `end`,
// with the job's exit code (null when a signal ended it) and that signal, and
// `oom_kill`, with the kernel OOM killer's count of kills in the job's cgroup
// and that cgroup's directory. This file alone knows their keys: the session
// writes them through EndEventFields and OomKillEventFields, the Pushgateway
// exporter reads the exit code back with EndEventFromFields, and the findings'
// replay reads the lines of events.jsonl with EndEventFromJson and
// OomKillEventFromJson.
//
// Thread-safe: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tv {

struct EndEvent {
  std::optional<int> exit_code;  // none: the job did not exit on its own
  std::optional<int> signal;     // the signal that ended it
};

struct OomKillEvent {
  uint64_t count = 0;  // the kernel OOM killer's kills in the job's cgroup
  std::string cgroup;  // that cgroup's directory
};

// The keys after `t` and `type`: exit_code always (null when none), signal
// where there is one; count and cgroup.
nlohmann::ordered_json EndEventFields(const EndEvent& e);
nlohmann::ordered_json OomKillEventFields(const OomKillEvent& e);

// An `end` event's keys after `t` and `type` read back (an Event's fields); a
// key of another type is as absent.
EndEvent EndEventFromFields(const nlohmann::ordered_json& fields);

// A line of events.jsonl read back; false when it is not an event of that
// type (or has no numeric `t`). A key of another type is as absent.
bool EndEventFromJson(const nlohmann::json& line, EndEvent* out);
bool OomKillEventFromJson(const nlohmann::json& line, OomKillEvent* out);

}  // namespace tv

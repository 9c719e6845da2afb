// The events the training processes' markers make, as events.jsonl holds them
// (docs/schema.md "events.jsonl"): client_start, client_end, epoch_begin,
// epoch_end, phase_begin, phase_end and tensorboard_logdir, and the
// marker_malformed said of one that could not be read. Their typed form
// is the TrainingEvent the marker protocol delivers (core/training_sample.h);
// this file alone knows their keys: the session writes each through
// MarkerEventFields, and the analysis, the report and the sinks read them back
// with MarkerEventFromJson (a line) or MarkerEventFromEvent.
//
// Thread-safe: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/event.h"
#include "core/event_type.h"
#include "core/training_sample.h"

namespace tv {

// Whether events of `type` are the markers' (the list above).
bool IsMarkerEvent(EventType type);

// The keys of `e`'s line after `t` and `type`: pid and rank always, then
// epoch, call, epochs (planned), steps, wait_s with timed_s, phase, framework, log_dir, and
// exception with message, each where it has one.
nlohmann::ordered_json MarkerEventFields(const TrainingEvent& e);

// Reads a line of events.jsonl that is a marker event; false for any other
// line (another type, no numeric `t`). A key of another type is as absent:
// pid 0, rank -1 (not distributed), no epoch, an empty phase.
bool MarkerEventFromJson(const nlohmann::json& line, TrainingEvent* out);
// The same of an event as the sinks receive it (before it is a line).
bool MarkerEventFromEvent(const Event& event, TrainingEvent* out);

// marker_malformed: a marker that could not be read (`message`, with the
// `note` that later ones are only counted), and its message back (empty for
// another event).
nlohmann::ordered_json MalformedMarkerFields(const std::string& message);
std::string MalformedMarkerMessage(const Event& event);

}  // namespace tv

// The event table: every type of line events.jsonl holds, with its further keys
// and when it is written, defined once. docs/schema.md's events table is made
// from it (`trainvitals docs events`; a unit test fails when they drift).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tv {

enum class EventType {
  kStart,
  kProcessStart,
  kProcessExit,
  kSourceUnavailable,
  kError,
  kSignalForwarded,
  kKillEscalated,
  kDetached,
  kEnd,
  kClientStart,
  kClientEnd,
  kEpochBegin,
  kEpochEnd,
  kPhaseBegin,
  kPhaseEnd,
  kTensorboardLogDir,
  kStacks,
  kProfile,
  kMarkerMalformed,
  kEpoch,
  kOomKill,
  kOom,
  kFindingOpen,
  kFindingClose,
  kAlertFiring,
  kAlertResolved,
  kAlertAction,
  kAlertActionFailed,
  kAlertNoticesLost,
  kCostForecast,
};

struct EventTypeDef {
  EventType type;
  std::string_view name;
  // Markdown; both empty: documented in the row of the type before it.
  std::string_view keys;
  std::string_view when;
};

// Every event type, in the order docs/schema.md lists them.
std::span<const EventTypeDef> EventTypes();
std::string_view EventTypeName(EventType type);
std::optional<EventType> ParseEventType(std::string_view name);

// docs/schema.md's events table.
std::string EventsMarkdown();

}  // namespace tv

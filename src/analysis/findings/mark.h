// Mark: what a training process said, as events.jsonl holds it (client start
// and end, epochs, phases), the analyzer's second input beside its rows.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/event_type.h"
#include "core/training_sample.h"

namespace tv {

// A mark is fed before the first row that ends at least this long after it:
// marks reach the sampler up to a tick late, so live and replayed runs see
// them at the same row.
inline constexpr double kMarkHold_s = 0.5;

struct Mark {
  // client_start, client_end, epoch_begin, epoch_end, phase_begin, phase_end, stacks or profile
  EventType type = EventType::kClientStart;
  double t = 0;
  int pid = 0;
  int rank = -1;
  std::optional<int64_t> epoch;
  std::string phase;
  std::string framework;
  std::optional<int64_t> planned_epochs;  // epoch_begin: the call's planned epochs
  std::optional<int64_t> call;            // epoch_begin: the framework call (1, 2, ...)
  std::string exception;  // client_end: what the process died of ("OutOfMemoryError")
  std::string message;
  std::optional<StackWait> stacks;        // stacks: where the process waits
  std::optional<ProfileCapture> profile;  // profile: the profile it took
};
// The mark a training event is (client start and end, epoch and phase
// boundaries); false for the others.
bool MarkFromTrainingEvent(const TrainingEvent& event, Mark* mark);
// The mark an events.jsonl event is (read by store/marker_event_record.h);
// false for other event types.
bool MarkFromEvent(const nlohmann::json& event, Mark* mark);

}  // namespace tv

// TrainingEventLog: writes what the training processes said through markers
// (clients starting and ending, epoch and phase boundaries) and the first
// malformed marker's fault to events.jsonl. Scalars and allocator figures are
// not written as events: they go into rows. An observer on the sampler thread.
#pragma once

#include <optional>
#include <vector>

#include "core/sampler.h"

namespace tv {

// The events.jsonl type of a training event (client_start, epoch_begin, ...);
// none for scalars, which go into rows.
std::optional<EventType> EventTypeOf(TrainingEventType type);

class TrainingEventLog final : public SampleObserver {
 public:
  void OnSample(const Sample& sample, std::vector<Event>* events) override;
};

}  // namespace tv

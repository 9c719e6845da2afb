// TrainingEventLog: writes what the training processes said through markers
// (clients starting and ending, epoch and phase boundaries) and the first
// malformed marker's fault to events.jsonl. Scalars and allocator figures are
// not written as events: they go into rows. The events' keys are the store's
// (store/marker_event_record.h). An observer on the sampler thread.
#pragma once

#include <vector>

#include "core/sampler.h"

namespace tv {

class TrainingEventLog final : public SampleObserver {
 public:
  void OnSample(const Sample& sample, std::vector<Event>* events) override;
};

}  // namespace tv

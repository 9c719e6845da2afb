#include "run/training_events.h"

#include "store/marker_event_record.h"

namespace tv {

void TrainingEventLog::OnSample(const Sample& sample, std::vector<Event>* events) {
  const TrainingSample& t = sample.training;
  if (!t.malformed_error.empty()) {
    events->push_back(
        Event{sample.t, EventType::kMarkerMalformed, MalformedMarkerFields(t.malformed_error)});
  }
  for (const TrainingEvent& m : t.events) {
    events->push_back(Event{m.t, m.type, MarkerEventFields(m)});
  }
}

}  // namespace tv

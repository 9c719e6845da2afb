#include "analysis/findings/mark.h"

#include <cmath>

#include "store/marker_event_record.h"

namespace tv {

bool MarkFromTrainingEvent(const TrainingEvent& e, Mark* m) {
  if (e.type == EventType::kTensorboardLogDir) return false;  // not a mark
  m->type = e.type;
  // As events.jsonl holds it: times to the millisecond.
  m->t = std::round(e.t * 1000) / 1000;
  m->pid = e.pid;
  m->rank = e.rank;
  m->epoch = e.epoch;
  m->planned_epochs = e.planned_epochs;
  m->call = e.call;
  m->phase = e.phase;
  m->framework = e.framework;
  m->exception = e.exception;
  m->message = e.message;
  m->stacks = e.stacks;
  m->profile = e.profile;
  return true;
}

bool MarkFromEvent(const nlohmann::json& e, Mark* m) {
  TrainingEvent said;
  return MarkerEventFromJson(e, &said) && MarkFromTrainingEvent(said, m);
}

}  // namespace tv

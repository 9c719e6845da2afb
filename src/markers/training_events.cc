#include "markers/training_events.h"

namespace tv {

std::string_view TrainingEventName(TrainingEventType type) {
  switch (type) {
    case TrainingEventType::kClientStart:
      return "client_start";
    case TrainingEventType::kEpochBegin:
      return "epoch_begin";
    case TrainingEventType::kEpochEnd:
      return "epoch_end";
    case TrainingEventType::kPhaseBegin:
      return "phase_begin";
    case TrainingEventType::kPhaseEnd:
      return "phase_end";
    case TrainingEventType::kScalars:
      return "scalars";
    case TrainingEventType::kTensorboardLogDir:
      return "tensorboard_log_dir";
    case TrainingEventType::kClientEnd:
      return "client_end";
  }
  return "marker";
}

void TrainingEventLog::OnSample(const Sample& sample, std::vector<Event>* events) {
  const TrainingSample& t = sample.training;
  if (!t.malformed_error.empty()) {
    events->push_back(Event{
        sample.t,
        "marker_malformed",
        {{"message", t.malformed_error}, {"note", "further malformed markers are only counted"}}});
  }
  for (const TrainingEvent& m : t.events) {
    if (m.type == TrainingEventType::kScalars) continue;  // in rows
    nlohmann::ordered_json fields = {{"pid", m.pid}, {"rank", m.rank}};
    if (m.epoch) fields["epoch"] = *m.epoch;
    if (m.call) fields["call"] = *m.call;
    if (m.planned_epochs) fields["epochs"] = *m.planned_epochs;
    if (m.steps) fields["steps"] = *m.steps;
    if (!m.phase.empty()) fields["phase"] = m.phase;
    if (!m.framework.empty()) fields["framework"] = m.framework;
    if (!m.log_dir.empty()) fields["log_dir"] = m.log_dir;
    if (!m.exception.empty()) fields["exception"] = m.exception, fields["message"] = m.message;
    events->push_back(Event{m.t, std::string(TrainingEventName(m.type)), std::move(fields)});
  }
}

}  // namespace tv

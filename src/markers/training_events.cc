#include "markers/training_events.h"

namespace tv {

void TrainingEventLog::OnSample(const Sample& sample, std::vector<Event>* events) {
  const TrainingSample& t = sample.training;
  if (!t.malformed_error.empty()) {
    events->push_back(Event{
        sample.t,
        EventType::kMarkerMalformed,
        {{"message", t.malformed_error}, {"note", "further malformed markers are only counted"}}});
  }
  for (const TrainingEvent& m : t.events) {
    nlohmann::ordered_json fields = {{"pid", m.pid}, {"rank", m.rank}};
    if (m.epoch) fields["epoch"] = *m.epoch;
    if (m.call) fields["call"] = *m.call;
    if (m.planned_epochs) fields["epochs"] = *m.planned_epochs;
    if (m.steps) fields["steps"] = *m.steps;
    if (!m.phase.empty()) fields["phase"] = m.phase;
    if (!m.framework.empty()) fields["framework"] = m.framework;
    if (!m.log_dir.empty()) fields["log_dir"] = m.log_dir;
    if (!m.exception.empty()) fields["exception"] = m.exception, fields["message"] = m.message;
    events->push_back(Event{m.t, m.type, std::move(fields)});
  }
}

}  // namespace tv

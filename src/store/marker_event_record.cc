#include "store/marker_event_record.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "store/record_json.h"

namespace tv {

bool IsMarkerEvent(EventType type) {
  switch (type) {
    case EventType::kClientStart:
    case EventType::kClientEnd:
    case EventType::kEpochBegin:
    case EventType::kEpochEnd:
    case EventType::kPhaseBegin:
    case EventType::kPhaseEnd:
    case EventType::kTensorboardLogDir:
    case EventType::kStacks:
    case EventType::kProfile:
      return true;
    default:
      return false;
  }
}

nlohmann::ordered_json MarkerEventFields(const TrainingEvent& m) {
  nlohmann::ordered_json fields = {{"pid", m.pid}, {"rank", m.rank}};
  if (m.epoch) fields["epoch"] = *m.epoch;
  if (m.call) fields["call"] = *m.call;
  if (m.planned_epochs) fields["epochs"] = *m.planned_epochs;
  if (m.steps) fields["steps"] = *m.steps;
  if (m.wait_s && m.timed_s) fields["wait_s"] = *m.wait_s, fields["timed_s"] = *m.timed_s;
  if (!m.phase.empty()) fields["phase"] = m.phase;
  if (!m.framework.empty()) fields["framework"] = m.framework;
  if (!m.log_dir.empty()) fields["log_dir"] = m.log_dir;
  if (!m.exception.empty()) fields["exception"] = m.exception, fields["message"] = m.message;
  if (m.stacks) {
    const StackWait& w = *m.stacks;
    for (const auto& [key, value] : {std::pair{"reason", &w.reason},
                                     {"request", &w.request},
                                     {"file", &w.file},
                                     {"waits_in", &w.waits_in},
                                     {"state", &w.state},
                                     {"frame", &w.frame},
                                     {"at", &w.at},
                                     {"code", &w.code}}) {
      if (!value->empty()) fields[key] = *value;
    }
    if (w.threads > 0) fields["threads"] = w.threads;
  }
  if (m.profile) {
    const ProfileCapture& p = *m.profile;
    fields["reason"] = p.reason;
    if (!p.request.empty()) fields["request"] = p.request;
    fields["dir"] = p.dir;
    if (p.seconds) fields["seconds"] = *p.seconds;
    if (!p.trace_error.empty()) fields["trace_error"] = p.trace_error;
    const TraceFigures& f = p.figures;
    if (f.steps > 0) fields["trace_steps"] = f.steps;
    for (const auto& [key, value] : {std::pair{"trace_step_s", &f.step_s},
                                     {"trace_data_loader_share", &f.data_loader_share},
                                     {"trace_h2d_share", &f.h2d_share},
                                     {"trace_gpu_idle_share", &f.gpu_idle_share}}) {
      if (*value) fields[key] = **value;
    }
    for (const auto& [key, top] :
         {std::pair{"trace_top_ops", &f.top_ops}, {"trace_top_kernels", &f.top_kernels}}) {
      if (top->empty()) continue;
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const auto& [name, share] : *top) list.push_back({name, share});
      fields[key] = std::move(list);
    }
  }
  return fields;
}

namespace {

// The event of `kind` at `t` from the object `e` holding its keys.
template <typename Json>
TrainingEvent Read(EventType kind, double t, const Json& e) {
  auto number = [&e](const char* key) -> std::optional<int64_t> {
    auto it = e.find(key);
    if (it == e.end() || !it->is_number_integer()) return std::nullopt;
    if (it->is_number_unsigned() && it->template get<uint64_t>() > uint64_t{INT64_MAX})
      return std::nullopt;
    return it->template get<int64_t>();
  };
  auto seconds = [&e](const char* key) -> std::optional<double> {
    auto it = e.find(key);
    if (it == e.end() || !it->is_number()) return std::nullopt;
    double v = it->template get<double>();
    return std::isfinite(v) && v >= 0 ? std::optional<double>(v) : std::nullopt;
  };
  auto text = [&e](const char* key) -> std::string {
    auto it = e.find(key);
    return it != e.end() && it->is_string() ? it->template get<std::string>() : std::string();
  };
  auto whole = [&](const char* key, int otherwise) {
    std::optional<int64_t> n = number(key);
    return n && *n >= INT32_MIN && *n <= INT32_MAX ? static_cast<int>(*n) : otherwise;
  };
  TrainingEvent m;
  m.type = kind;
  m.t = t;
  m.pid = whole("pid", 0);
  m.rank = whole("rank", -1);
  m.epoch = number("epoch");
  m.planned_epochs = number("epochs");
  m.call = number("call");
  m.steps = number("steps");
  m.wait_s = seconds("wait_s");
  m.timed_s = seconds("timed_s");
  if (!m.wait_s || !m.timed_s) m.wait_s.reset(), m.timed_s.reset();
  m.phase = text("phase");
  m.framework = text("framework");
  m.log_dir = text("log_dir");
  m.exception = text("exception");
  m.message = text("message");
  if (kind == EventType::kStacks) {
    StackWait& w = m.stacks.emplace();
    w.reason = text("reason");
    w.request = text("request");
    w.file = text("file");
    w.waits_in = text("waits_in");
    w.state = text("state");
    w.frame = text("frame");
    w.at = text("at");
    w.code = text("code");
    w.threads = whole("threads", 0);
  }
  if (kind == EventType::kProfile) {
    ProfileCapture& p = m.profile.emplace();
    p.reason = text("reason");
    p.request = text("request");
    p.dir = text("dir");
    p.steps = m.steps.value_or(0);
    p.seconds = seconds("seconds");
    p.trace_error = text("trace_error");
    TraceFigures& f = p.figures;
    f.steps = whole("trace_steps", 0);
    f.step_s = seconds("trace_step_s");
    f.data_loader_share = seconds("trace_data_loader_share");
    f.h2d_share = seconds("trace_h2d_share");
    f.gpu_idle_share = seconds("trace_gpu_idle_share");
    for (const auto& [key, top] :
         {std::pair{"trace_top_ops", &f.top_ops}, {"trace_top_kernels", &f.top_kernels}}) {
      auto list = e.find(key);
      if (list == e.end() || !list->is_array()) continue;
      for (const auto& item : *list) {
        if (item.is_array() && item.size() == 2 && item[0].is_string() && item[1].is_number()) {
          top->emplace_back(item[0].template get<std::string>(), item[1].template get<double>());
        }
      }
    }
  }
  return m;
}

}  // namespace

bool MarkerEventFromJson(const nlohmann::json& line, TrainingEvent* out) {
  std::optional<EventType> kind = EventLineType(line);
  if (!kind || !IsMarkerEvent(*kind)) return false;
  *out = Read(*kind, line.find(kEventT)->get<double>(), line);
  return true;
}

nlohmann::ordered_json MalformedMarkerFields(const std::string& message) {
  return {{kMessage, message}, {"note", "further malformed markers are only counted"}};
}

std::string MalformedMarkerMessage(const Event& event) {
  if (event.type != EventType::kMarkerMalformed) return "";
  auto it = event.fields.find(kMessage);
  return it != event.fields.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool MarkerEventFromEvent(const Event& event, TrainingEvent* out) {
  if (!IsMarkerEvent(event.type)) return false;
  *out = Read(event.type, event.t, event.fields);
  return true;
}

}  // namespace tv

#include "sinks/jsonl_sink.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include "sinks/row_json.h"
#include "sinks/write_all.h"

namespace tv {

JsonlSink::JsonlSink(const std::string& samples_path, const std::string& events_path) {
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC;
  samples_fd_ = ::open(samples_path.c_str(), flags, 0644);
  events_fd_ = ::open(events_path.c_str(), flags, 0644);
}

JsonlSink::~JsonlSink() { OnClose(); }

void JsonlSink::WriteLine(int fd, const char* what) {
  // One write(2) per line: O_APPEND makes it land whole, so a reader never sees
  // half a line except the last one of a crash.
  if (fd >= 0) WriteAll(fd, line_, what, &write_failed_);
}

void JsonlSink::OnRow(const Row& row) {
  line_.clear();
  AppendRowJson(row, &line_);
  line_.push_back('\n');
  WriteLine(samples_fd_, "samples.jsonl");
  ++rows_written_;
  WriteEventsUntil(row.t - kEventHoldS);
}

void AppendEventJson(const Event& event, std::string* out) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["t"] = std::round(event.t * 1000) / 1000;
  j["type"] = event.type;
  for (const auto& [k, v] : event.fields.items()) j[k] = v;
  out->append(j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  out->push_back('\n');
}

void JsonlSink::OnEvent(const Event& event) { held_events_.push_back(event); }

void JsonlSink::WriteEventsUntil(double until_t) {
  if (held_events_.empty()) return;
  std::stable_sort(held_events_.begin(), held_events_.end(),
                   [](const Event& a, const Event& b) { return a.t < b.t; });
  auto end = std::upper_bound(held_events_.begin(), held_events_.end(), until_t,
                              [](double t, const Event& e) { return t < e.t; });
  for (auto it = held_events_.begin(); it != end; ++it) {
    line_.clear();
    AppendEventJson(*it, &line_);
    WriteLine(events_fd_, "events.jsonl");
  }
  held_events_.erase(held_events_.begin(), end);
}

void JsonlSink::OnClose() {
  WriteEventsUntil(std::numeric_limits<double>::infinity());
  for (int* fd : {&samples_fd_, &events_fd_}) {
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
  }
}

}  // namespace tv

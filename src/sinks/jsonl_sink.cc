#include "sinks/jsonl_sink.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include "sinks/row_json.h"
#include "sinks/write_all.h"
#include "store/event_line.h"

namespace tv {

JsonlSink::JsonlSink(const std::string& samples_path, const std::string& events_path) {
  Open(samples_path, &samples_);
  Open(events_path, &events_);
}

JsonlSink::~JsonlSink() { OnClose(); }

void JsonlSink::Open(const std::string& path, File* file) {
  file->fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  struct stat st {};
  if (file->fd >= 0 && ::fstat(file->fd, &st) == 0) {
    file->size = st.st_size;
    return;
  }
  std::string error = fmt::format("cannot open {}: {}", path, std::strerror(errno));
  if (file->fd >= 0) ::close(file->fd);
  file->fd = -1;
  fmt::print(stderr, "trainvitals: {} (it is not written; monitoring goes on)\n", error);
  if (!open_error_.empty()) open_error_ += "; ";
  open_error_ += error;
}

bool JsonlSink::WriteLine(File* file) {
  if (file->fd < 0) return false;
  // A partial line left by an earlier failure goes first, or nothing is written.
  if (file->dirty && ::ftruncate(file->fd, file->size) != 0) return false;
  file->dirty = false;
  // One write(2) per line where the kernel allows: O_APPEND lands it whole.
  size_t done = 0;
  int error = WriteFully(file->fd, line_, &done);
  if (error == 0) {
    file->size += static_cast<off_t>(done);
    if (file->failing) {
      fmt::print(stderr, "trainvitals: writing {} again\n", file->name);
      file->failing = false;
    }
    return true;
  }
  // Never leave half a line: a later line would follow it and break the file.
  if (done > 0 && ::ftruncate(file->fd, file->size) != 0) file->dirty = true;
  if (!file->failing) {
    fmt::print(stderr,
               "trainvitals: cannot write {}: {} (lines are lost until it can; "
               "monitoring goes on)\n",
               file->name, std::strerror(error));
    file->failing = true;
  }
  return false;
}

void JsonlSink::OnRow(const Row& row) {
  line_.clear();
  AppendRowJson(row, &line_);
  line_.push_back('\n');
  if (WriteLine(&samples_)) {
    ++rows_written_;
  } else {
    ++rows_lost_;
  }
  WriteEventsUntil(row.t - kEventHoldS);
}

void AppendEventJson(const Event& event, std::string* out) {
  nlohmann::ordered_json j = EventLineJson(event);
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
    if (!WriteLine(&events_)) ++events_lost_;
  }
  held_events_.erase(held_events_.begin(), end);
}

void JsonlSink::OnClose() {
  WriteEventsUntil(std::numeric_limits<double>::infinity());
  for (File* file : {&samples_, &events_}) {
    if (file->fd >= 0) {
      ::close(file->fd);
      file->fd = -1;
    }
  }
}

}  // namespace tv

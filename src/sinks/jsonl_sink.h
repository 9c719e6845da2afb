// JsonlSink: appends rows to samples.jsonl and events to events.jsonl, one
// complete line per write(2), flushed as it goes: a crash (even SIGKILL) loses
// at most the line being written, and every complete line stays valid JSON.
// A write failure is reported once on stderr; later rows are still tried.
// Events are written in the order of their `t`: they arrive stamped by their
// origin (a training process's own clock, the sampler's tick, the end of an
// epoch), not in that order, so each is held until a row at least
// `kEventHoldS` newer than it has been written, then all held events older
// than that go out sorted; OnClose writes the rest.
//
// Thread safety: used on the sink thread only.
#pragma once

#include <string>
#include <vector>

#include "core/sink.h"

namespace tv {

class JsonlSink final : public Sink {
 public:
  // Opens (creating or appending) both files; throws nothing, check ok().
  JsonlSink(const std::string& samples_path, const std::string& events_path);
  ~JsonlSink() override;
  bool ok() const { return samples_fd_ >= 0 && events_fd_ >= 0; }
  void OnRow(const Row& row) override;
  void OnEvent(const Event& event) override;
  void OnClose() override;
  uint64_t rows_written() const { return rows_written_; }

 private:
  static constexpr double kEventHoldS = 0.5;

  void WriteLine(int fd, const char* what);
  // Writes the held events with t <= `until_t` in time order.
  void WriteEventsUntil(double until_t);
  int samples_fd_ = -1;
  int events_fd_ = -1;
  std::string line_;
  bool write_failed_ = false;
  uint64_t rows_written_ = 0;
  std::vector<Event> held_events_;  // not yet written, in arrival order
};

// Appends the JSON line of an event (with newline) to `out`.
void AppendEventJson(const Event& event, std::string* out);

}  // namespace tv

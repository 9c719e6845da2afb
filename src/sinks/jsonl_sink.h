// JsonlSink: appends rows to samples.jsonl and events to events.jsonl, one
// complete line per write(2), flushed as it goes: a crash (even SIGKILL) loses
// at most the line being written, and every complete line stays valid JSON.
//
// A full disk (or any write error) never leaves half a line behind: the file is
// truncated back to its last complete line, the row is counted as lost and the
// next one is tried, so writing resumes by itself when space returns. Failures
// (and a file that could not be opened) are said once per file on stderr.
//
// Events are written in the order of their `t`: they arrive stamped by their
// origin (a training process's own clock, the sampler's tick, the end of an
// epoch), not in that order, so each is held until a row at least
// `kEventHoldS` newer than it has been written, then all held events older
// than that go out sorted; OnClose writes the rest.
//
// Thread safety: used on the sink thread only; the counters are read after the
// sink thread ended (SinkThread::Close).
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
  bool ok() const { return samples_.fd >= 0 && events_.fd >= 0; }
  // Why a file could not be opened; empty when both are open.
  const std::string& open_error() const { return open_error_; }
  void OnRow(const Row& row) override;
  void OnEvent(const Event& event) override;
  void OnClose() override;
  // Rows whose whole line is in samples.jsonl.
  uint64_t rows_written() const { return rows_written_; }
  // Rows that could not be written (full disk, file not open).
  uint64_t rows_lost() const { return rows_lost_; }
  uint64_t events_lost() const { return events_lost_; }

 private:
  static constexpr double kEventHoldS = 0.5;

  struct File {
    std::string name;  // "samples.jsonl", for messages
    int fd = -1;
    off_t size = 0;      // the end of the last complete line
    bool dirty = false;  // a partial line could not be truncated away yet
    bool failing = false;
  };
  void Open(const std::string& path, File* file);
  // Appends line_ whole or not at all; false when it is not in the file.
  bool WriteLine(File* file);
  // Writes the held events with t <= `until_t` in time order.
  void WriteEventsUntil(double until_t);
  File samples_{"samples.jsonl"};
  File events_{"events.jsonl"};
  std::string open_error_;
  std::string line_;
  uint64_t rows_written_ = 0;
  uint64_t rows_lost_ = 0;
  uint64_t events_lost_ = 0;
  std::vector<Event> held_events_;  // not yet written, in arrival order
};

// Appends the JSON line of an event (with newline) to `out`.
void AppendEventJson(const Event& event, std::string* out);

}  // namespace tv

// JsonlSink: appends rows to samples.jsonl and events to events.jsonl, one
// complete line per write(2), flushed as it goes: a crash (even SIGKILL) loses
// at most the line being written, and every complete line stays valid JSON.
// A write failure is reported once on stderr; later rows are still tried.
//
// Thread safety: used on the sink thread only.
#pragma once

#include <string>

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
  void WriteLine(int fd, const char* what);
  int samples_fd_ = -1;
  int events_fd_ = -1;
  std::string line_;
  bool write_failed_ = false;
  uint64_t rows_written_ = 0;
};

// Appends the JSON line of an event (with newline) to `out`.
void AppendEventJson(const Event& event, std::string* out);

}  // namespace tv

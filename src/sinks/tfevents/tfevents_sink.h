// TfeventsSink: writes each row as TensorBoard scalars into an event file of
// its own run directory, <logdir>/system, beside the training's runs. Every
// start makes a new file (events.out.tfevents.<unix s>.<host>.<pid>.<n>),
// never appending to an old one. Each record goes out in one write(2), so a
// reader sees whole records and at most a cut last one. A write failure is
// reported once on stderr; later rows are still tried.
//
// Thread safety: Open on the controlling thread; the rest on the sink thread.
#pragma once

#include <memory>
#include <string>

#include "core/sink.h"
#include "sinks/tfevents/row_scalars.h"

namespace tv {

class TfeventsSink final : public Sink {
 public:
  // Creates <logdir>/system and a new event file in it, and writes the
  // file_version record. On failure returns nullptr and sets `*error`.
  static std::unique_ptr<TfeventsSink> Open(const std::string& logdir, double start_wall,
                                            double interval_s, std::string* error);
  ~TfeventsSink() override;
  void OnRow(const Row& row) override;
  void OnClose() override;
  // Removes the file again (the command never started).
  void Discard();
  const std::string& path() const { return path_; }

 private:
  TfeventsSink(int fd, std::string path, double interval_s);
  void WriteRecord(const std::string& event);
  int fd_ = -1;
  std::string path_;
  TbStepper stepper_;
  std::string buffer_;
  bool write_failed_ = false;
};

}  // namespace tv

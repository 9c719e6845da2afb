// TfeventsSink: writes each row as TensorBoard scalars into an event file of
// its own run directory, <logdir>/system, beside the training's runs (see
// board_file.h): a new events.out.tfevents.<unix s>.<host>.<pid>.<n> each
// start, one record per write(2).
//
// Thread safety: Open on the controlling thread; the rest on the sink thread.
#pragma once

#include <memory>
#include <string>

#include "core/sink.h"
#include "sinks/board_file.h"
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
  void Discard() { file_->Discard(); }
  const std::string& path() const { return file_->path(); }

 private:
  TfeventsSink(std::unique_ptr<BoardFile> file, double interval_s)
      : file_(std::move(file)), stepper_(interval_s) {}
  void WriteRecord(const std::string& event);
  std::unique_ptr<BoardFile> file_;
  TbStepper stepper_;
  std::string buffer_;
};

}  // namespace tv

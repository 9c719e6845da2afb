// VdlSink: writes each row as VisualDL scalars (the same tags, values and
// steps as TensorBoard, see tfevents/row_scalars.h) into <logdir>/system/
// vdlrecords.<unix s>.log, a new file each start (VisualDL reads the newest
// file of a directory; see board_file.h). A row's records go out in one
// write(2).
//
// Thread safety: Open on the controlling thread; the rest on the sink thread.
#pragma once

#include <memory>
#include <string>

#include "core/sink.h"
#include "sinks/board_file.h"
#include "sinks/tfevents/row_scalars.h"

namespace tv {

class VdlSink final : public Sink {
 public:
  // Creates <logdir>/system and a new log file in it with its meta data
  // record. On failure returns nullptr and sets `*error`.
  static std::unique_ptr<VdlSink> Open(const std::string& logdir, double start_wall,
                                       double interval_s, std::string* error);
  ~VdlSink() override;
  void OnRow(const Row& row) override;
  void OnClose() override;
  // Removes the file again (the command never started).
  void Discard() { file_->Discard(); }

 private:
  VdlSink(std::unique_ptr<BoardFile> file, double interval_s)
      : file_(std::move(file)), stepper_(interval_s) {}
  void Write();
  std::unique_ptr<BoardFile> file_;
  TbStepper stepper_;
  std::string buffer_;
};

}  // namespace tv

// BoardFile: a new file of records for a board (TensorBoard, VisualDL) in
// <logdir>/system, a run directory of its own beside the training's. Every
// start makes a new file, never appending to an old one. Each Write goes out
// in one write(2) where the kernel allows, so a reader sees whole records and
// at most a cut last one. A write failure is said once on stderr; later
// writes are still tried.
//
// Thread safety: Create on the controlling thread; the rest on the sink thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace tv {

class BoardFile {
 public:
  // Creates <logdir>/system and there the first free name of name_for(0),
  // name_for(1), ... On failure returns nullptr and sets `*error`, which
  // starts with `flag` (the option that asked for the file).
  static std::unique_ptr<BoardFile> Create(const std::string& logdir,
                                           const std::function<std::string(int)>& name_for,
                                           std::string_view flag, std::string* error);
  ~BoardFile();
  BoardFile(const BoardFile&) = delete;
  BoardFile& operator=(const BoardFile&) = delete;

  void Write(std::string_view data);
  bool failed() const { return failed_; }
  void Close();
  // Closes and removes the file, and <logdir>/system when left empty.
  void Discard();
  const std::string& path() const { return path_; }

 private:
  BoardFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
  bool failed_ = false;
};

}  // namespace tv

#include "sinks/board_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sinks/write_all.h"

namespace tv {

std::unique_ptr<BoardFile> BoardFile::Create(const std::string& logdir,
                                             const std::function<std::string(int)>& name_for,
                                             std::string_view flag, std::string* error) {
  std::string dir = logdir + "/system";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *error = fmt::format("{}: cannot create {}: {}", flag, dir, ec.message());
    return nullptr;
  }
  for (int n = 0; n < 100; ++n) {
    std::string path = dir + "/" + name_for(n);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) {
      *error = fmt::format("{}: cannot write in {}: {}", flag, dir, std::strerror(errno));
      return nullptr;
    }
    return std::unique_ptr<BoardFile>(new BoardFile(fd, std::move(path)));
  }
  *error = fmt::format("{}: no free file name in {}", flag, dir);
  return nullptr;
}

BoardFile::~BoardFile() { Close(); }

void BoardFile::Write(std::string_view data) {
  if (fd_ >= 0) WriteAll(fd_, data, path_, &failed_);
}

void BoardFile::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void BoardFile::Discard() {
  Close();
  ::unlink(path_.c_str());
  std::error_code ec;
  std::filesystem::remove(std::filesystem::path(path_).parent_path(), ec);  // only if empty
}

}  // namespace tv

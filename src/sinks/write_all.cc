#include "sinks/write_all.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tv {

int WriteFully(int fd, std::string_view data, size_t* done) {
  size_t written = 0;
  int error = 0;
  while (written < data.size()) {
    ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : ENOSPC;
      break;
    }
    written += static_cast<size_t>(n);
  }
  if (done != nullptr) *done = written;
  return error;
}

bool WriteAll(int fd, std::string_view data, std::string_view what, bool* said) {
  int error = WriteFully(fd, data);
  if (error != 0 && !*said) {
    fmt::print(stderr, "trainvitals: cannot write {}: {} (monitoring goes on)\n", what,
               std::strerror(error));
    *said = true;
  }
  return error == 0;
}

}  // namespace tv

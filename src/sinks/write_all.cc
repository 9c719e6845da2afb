#include "sinks/write_all.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tv {

bool WriteAll(int fd, std::string_view data, std::string_view what, bool* said) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (!*said) {
        fmt::print(stderr, "trainvitals: cannot write {}: {} (monitoring goes on)\n", what,
                   n < 0 ? std::strerror(errno) : "short write");
        *said = true;
      }
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace tv

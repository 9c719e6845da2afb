#include "core/host.h"

#include <pwd.h>
#include <unistd.h>

#include <array>

namespace tv {

std::string HostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) return {};
  return host;
}

std::optional<std::string> UserNameOf(unsigned uid) {
  passwd entry{};
  passwd* found = nullptr;
  std::array<char, 4096> buffer{};
  if (::getpwuid_r(static_cast<uid_t>(uid), &entry, buffer.data(), buffer.size(), &found) != 0 ||
      found == nullptr) {
    return std::nullopt;
  }
  return std::string(found->pw_name);
}

}  // namespace tv

#include "core/host.h"

#include <unistd.h>

namespace tv {

std::string HostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) return {};
  return host;
}

}  // namespace tv

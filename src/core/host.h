// Facts about this machine that several parts name: the host name.
#pragma once

#include <string>

namespace tv {

// gethostname(2); empty when it fails.
std::string HostName();

}  // namespace tv

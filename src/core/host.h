// Facts about this machine that several parts name: the host name, a user's
// name.
#pragma once

#include <optional>
#include <string>

namespace tv {

// gethostname(2); empty when it fails.
std::string HostName();

// The name of user `uid` (getpwuid_r); none when the user database has none.
std::optional<std::string> UserNameOf(unsigned uid);

}  // namespace tv

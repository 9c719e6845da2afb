// Writing a whole buffer to a file that a sink appends to, for sinks whose
// failures must never stop the run: the first failure is said once on stderr
// (`*said` remembers it), later writes are still tried.
#pragma once

#include <string_view>

namespace tv {

// Writes all of `data` to `fd` (one write(2) where the kernel allows, retried on
// EINTR). Returns false on failure; `what` names the file in the message.
bool WriteAll(int fd, std::string_view data, std::string_view what, bool* said);

}  // namespace tv

// Writing a whole buffer to a file: WriteFully says why it failed; WriteAll,
// for sinks whose failures must never stop the run, says the first failure
// once on stderr (`*said` remembers it), later writes are still tried.
#pragma once

#include <cstddef>
#include <string_view>

namespace tv {

// Writes all of `data` to `fd` (one write(2) where the kernel allows, retried
// on EINTR and after a short write, whose next write says why). Returns 0, or
// the errno of the write that failed (ENOSPC for one that wrote nothing);
// `*done` (when given) is how many bytes were written.
int WriteFully(int fd, std::string_view data, size_t* done = nullptr);

// WriteFully, saying its first failure once (`what` names the file). Returns
// false on failure.
bool WriteAll(int fd, std::string_view data, std::string_view what, bool* said);

}  // namespace tv

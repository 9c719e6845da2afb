// Where running sessions announce themselves for `trainvitals top`: a directory
// private to the user ($XDG_RUNTIME_DIR/trainvitals/sessions, else
// /dev/shm/trainvitals-<uid>/sessions where /dev/shm is a tmpfs, else
// /tmp/trainvitals-<uid>/sessions), mode 0700 and owned by the user, so that
// nobody else reads what a job runs or plants a session in it.
//
// Thread safety: free functions, safe from any thread.
#pragma once

#include <string>

namespace tv {

// The directory, made when `create` and missing. Empty with *error saying why
// when it is missing (and not `create`), cannot be made, or is not private
// (another owner, group or other access, a symbolic link).
std::string LiveSessionsDir(bool create, std::string* error);

}  // namespace tv

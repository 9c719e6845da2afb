// Files and directories that only their owner may read: the run history and
// what else holds command lines and other users' process names. Nothing here
// follows a symbolic link in the last component, and nothing touches what
// another user owns.
//
// Thread safety: free functions, safe from any thread.
#pragma once

#include <sys/types.h>

#include <string>

#include "core/status.h"

namespace tv {

// Makes directory `dir` and its missing parents, each one it makes with
// `mode` (the umask may take bits away, never add them). Existing ones are
// left as they are.
Status MakeDirs(const std::string& dir, mode_t mode);

// Creates `path` as an empty file with `mode` unless something is there
// already. *created says which.
Status CreateFileIfAbsent(const std::string& path, mode_t mode, bool* created);

// `dir` as a directory only this user (the real uid) may enter, made (mode
// 0700) when absent and `create`: an error when it is a link, not a
// directory, another user's, or open to others (what another user made
// first at a name anyone can make, in /tmp).
Status PrivateDir(const std::string& dir, bool create);

// Takes away every permission bit of `path` that `mode` lacks, when `path` is
// this user's (the effective uid's) file or directory; an absent path, a link
// or another user's file is left alone (ok).
Status NarrowMode(const std::string& path, mode_t mode);

}  // namespace tv

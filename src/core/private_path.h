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

// This user's place for files that end with the processes using them
// (sockets, live state), in memory: $XDG_RUNTIME_DIR/trainvitals where the
// runtime directory is this user's, else /dev/shm/trainvitals-<uid> where
// /dev/shm is a memory file system (tmpfs). Empty when there is neither. Not
// made here (PrivateDir). On a disk's file system each file made and removed
// costs an inode and a journal entry (110 us of CPU against 17 on tmpfs,
// measured here).
std::string MemoryRuntimeDir();

// Takes away every permission bit of `path` that `mode` lacks, when `path` is
// this user's (the effective uid's) file or directory; an absent path, a link
// or another user's file is left alone (ok).
Status NarrowMode(const std::string& path, mode_t mode);

}  // namespace tv

// /proc/locks: which process the kernel says holds a file lock. Parsing is a
// pure function of the file's text; reading it is one small function beside.
//
// A line is "ID: TYPE MODE ACCESS PID MAJOR:MINOR:INODE START END", e.g.
// "3: FLOCK  ADVISORY  WRITE 4242 fe:00:9978714 0 EOF"; the device numbers
// are hexadecimal, the inode decimal. Lines of processes waiting for a lock
// carry "->" after the ID and hold nothing. An FLOCK line's PID is the process
// that took the lock, which may since have exited while processes that
// inherited its open file keep the lock held.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tv {

struct ProcLock {
  std::string type;      // "FLOCK", "POSIX", "OFDLCK", "LEASE", ...
  bool write = false;    // "WRITE" (exclusive) rather than "READ" (shared)
  bool waiting = false;  // a process waiting for the lock, not holding it
  int pid = 0;           // -1 where the kernel does not say (OFD locks)
  unsigned major = 0;
  unsigned minor = 0;
  uint64_t inode = 0;
};

// Every well-formed line of `text`; malformed lines are skipped.
std::vector<ProcLock> ParseProcLocks(std::string_view text);

// The PID of the process holding an flock(2) lock on the file (device
// major:minor, inode), an exclusive holder before a shared one; none when no
// line names one.
std::optional<int> FlockHolder(const std::vector<ProcLock>& locks, unsigned major, unsigned minor,
                               uint64_t inode);

// The text of /proc/locks; empty when it cannot be read.
std::string ReadProcLocks();

}  // namespace tv

// Pure parsers for the per-process files under /proc/PID. Each takes the file's
// text and returns what it could read; none throws, allocates beyond its result,
// or trusts the text (a process name may hold spaces, parentheses and ") ").
// A field that is missing or not a number is absent, never 0.
//
// Thread safety: free functions without state; safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tv {

// The fields of /proc/PID/stat that the process source uses.
struct ProcStat {
  int pid = 0;
  std::string comm;  // between the first '(' and the last ')'
  char state = '?';  // R, S, D, Z, T, ...
  int ppid = 0;
  int pgrp = 0;              // process group
  int session = 0;           // session id: its leader's PID
  uint64_t utime_ticks = 0;  // clock ticks (sysconf(_SC_CLK_TCK))
  uint64_t stime_ticks = 0;
  // CPU of the children it waited for (cutime + cstime, each child's own
  // children included): grows when it reaps one.
  uint64_t children_ticks = 0;
  uint64_t num_threads = 0;
  uint64_t starttime_ticks = 0;  // clock ticks after boot; with pid, names the process
  uint64_t rss_pages = 0;
  // Where its program's text starts (field 26): a fork shares its parent's,
  // an exec places its program anew (at a random address, for a PIE binary).
  // 0 or 1 where the reader may not see it (a zombie, another user's
  // process); 0 where the line ends before it.
  uint64_t start_code = 0;
};

// The path of /proc/PID/<file>; /proc/self/<file> for `pid` <= 0.
std::string ProcPidFile(int pid, std::string_view file);

// Parses /proc/PID/stat. Absent when any field up to rss (24), or the field
// after it, is missing or malformed; start_code is read where it follows.
std::optional<ProcStat> ParseProcStat(std::string_view text);

// Appends the PIDs listed in /proc/PID/task/TID/children (space separated) to
// *pids; tokens that are not positive PIDs are skipped. Allocates only when
// *pids must grow.
void AppendChildPids(std::string_view text, std::vector<int>* pids);

// The storage counters of /proc/PID/io.
struct ProcIo {
  std::optional<uint64_t> read_bytes;
  std::optional<uint64_t> write_bytes;
};
ProcIo ParseProcIo(std::string_view text);

// The totals of /proc/PID/smaps_rollup, in bytes (the file says kB).
struct SmapsRollup {
  std::optional<uint64_t> pss_bytes;
  std::optional<uint64_t> rss_bytes;
  // Pss_Anon plus Pss_Shmem (Linux 5.10 on; absent before): the part of the
  // PSS that only the process's own forks share, not libraries' file pages
  // whose share grows as other processes mapping them exit.
  std::optional<uint64_t> pss_anon_bytes;
};
SmapsRollup ParseSmapsRollup(std::string_view text);

// The NSpid line of /proc/PID/status: the PID in each namespace from the one
// /proc belongs to down to the process's own. Empty when the line is missing or
// malformed (kernels before 4.1 have no NSpid).
std::vector<int> ParseNsPids(std::string_view status_text);

// /proc/PID/cmdline as one line: each NUL (and newline or tab) becomes a space,
// trailing separators are dropped, and the line is cut to `max_chars` characters.
inline constexpr size_t kMaxCmdlineChars = 4096;
std::string FormatCmdline(std::string_view raw, size_t max_chars = kMaxCmdlineChars);

}  // namespace tv

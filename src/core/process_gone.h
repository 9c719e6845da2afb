// Whether a process has ended: kill(pid, 0) says ESRCH. A process of another
// user (EPERM) lives. A PID means nothing in another PID namespace.
#pragma once

#include <signal.h>

#include <cerrno>

namespace tv {

inline bool ProcessGone(int pid) { return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace tv

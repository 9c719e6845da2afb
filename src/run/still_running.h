// Whether a process the run saw still runs: the check behind summary.json's
// "leaked" (analysis/processes.h ProcessTable::set_command_ended).
#pragma once

#include <string>

namespace tv {

// True when `pid` is alive, not a zombie, and still named `name` (its PID was
// not reused by another program). Reads /proc through Env::Default().
bool StillRunning(int pid, const std::string& name);

}  // namespace tv

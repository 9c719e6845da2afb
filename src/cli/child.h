// Starting and supervising the monitored command for `trainvitals run`.
#pragma once

#include <signal.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tv {

struct ChildExit {
  int code = 0;               // as a shell reports it: 128+N when killed by signal N
  std::optional<int> signal;  // the signal that killed it
};

// Blocks the signals the supervisor waits for (INT, TERM, HUP, CHLD) in the
// calling thread; call before any other thread starts so all inherit the mask.
void BlockSupervisorSignals();

// Forks and execs `argv` in its own process group (given the terminal's
// foreground when trainvitals has it). Returns the child's PID, or the shell's
// code for a command that cannot start (127 not found, 126 not executable)
// with `*error` set to a shell-like message.
int SpawnChild(const std::vector<std::string>& argv, int* start_error_code, std::string* error);

// Waits for `child` to exit, forwarding INT, TERM and HUP to its process group
// and reaping every other child (trainvitals is the job's subreaper).
// `on_signal` is told of each forwarded signal.
ChildExit SuperviseChild(int child, const std::function<void(int)>& on_signal);

}  // namespace tv

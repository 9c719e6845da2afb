// Starting and supervising the monitored command for `trainvitals run`.
#pragma once

#include <signal.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/unique_fd.h"

namespace tv {

class JobCgroup;

struct ChildExit {
  int code = 0;               // as a shell reports it: 128+N when killed by signal N
  std::optional<int> signal;  // the signal that killed it
};

// Blocks the signals the supervisor waits for (INT, TERM, HUP, CHLD, WINCH,
// TSTP) in the calling thread; call before any other thread starts so all
// inherit the mask.
void BlockSupervisorSignals();

// The command forked and in its cgroups, its exec perhaps still under way.
struct ForkedChild {
  int pid = -1;
  UniqueFd exec_report;  // closed by the exec; exec's errno when it failed
};

// Forks `argv` and has it exec in its own process group (given the
// terminal's foreground when trainvitals has it). `inherit_fds` stay open in
// the child across exec (the GPU locks, which it then holds too). The child
// is made in `cgroup` (when not null; its v2 directory, where clone3 can) or
// enters it before exec, and `cgroup` learns which of its hierarchies it is in
// (JobCgroup::Entered). Returns once the child is in them, before its exec
// ends: what the caller does meanwhile overlaps it (AwaitExec). pid -1 with
// `*error` set when it could not fork.
ForkedChild ForkChild(const std::vector<std::string>& argv, const std::vector<int>& inherit_fds,
                      JobCgroup* cgroup, std::string* error);

// Waits for `child`'s exec. 0 once it ran, else the shell's code for a
// command that cannot start (127 not found, 126 not executable) with `*error`
// set to a shell-like message naming `program`, and the child reaped.
int AwaitExec(ForkedChild& child, const std::string& program, std::string* error);

// What the supervisor tells its caller while it waits. Each may be empty.
struct SupervisorHooks {
  std::function<void(int)> on_signal;  // a signal was forwarded to the child's group
  std::function<void()> on_stop;       // the child stopped (Ctrl-Z): trainvitals stops next
  std::function<void()> on_continue;   // trainvitals was continued (fg), the child next
  std::function<void()> on_tick;       // on SIGWINCH, and every 250 ms (when set)
  // The job was sent SIGKILL (ForceEnd): `reason` is "second_signal" or
  // "grace_period", `after_s` the seconds since the first signal.
  std::function<void(const char* reason, double after_s)> on_kill;
};

// When the supervisor ends the job by force: when the first SIGINT or SIGTERM
// comes again, or `kill_after_s` seconds (0: never) after it, the job's
// process group and its whole tree get SIGKILL (run/job_kill.h). HUP, and the
// other of INT and TERM, are only forwarded.
struct ForceEnd {
  double kill_after_s = 20;
};

// Waits for `child` to exit, forwarding INT, TERM, HUP and TSTP to its process group
// and reaping every other child (trainvitals is the job's subreaper). When the
// child stops (Ctrl-Z), trainvitals takes back the terminal it gave the child
// and stops itself, so the shell sees the job stopped; when continued (fg,
// bg), it gives the terminal back (fg only) and continues the child's group.
// A job that does not end after INT, TERM or HUP is killed as `force` says.
ChildExit SuperviseChild(int child, const SupervisorHooks& hooks, const ForceEnd& force);

// After the command ended: waits up to `grace_s` for the processes it left
// behind (re-parented to trainvitals, the job's subreaper: a multiprocessing
// resource tracker ends on its parent's exit) to end, reaping each. Returns
// when none is left, when the grace ends or on INT, TERM or HUP. Those still
// running then outlived the command.
void ReapLeftovers(double grace_s);

}  // namespace tv

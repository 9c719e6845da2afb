// trainvitals attach [options] PID
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "core/env.h"
#include "core/process_gone.h"
#include "run/session.h"
#include "sources/cgroup_usage.h"
#include "views/terminal_row.h"

namespace tv {
namespace {

std::vector<std::string> CommandOf(int pid) {
  std::ifstream in(fmt::format("/proc/{}/cmdline", pid), std::ios::binary);
  std::vector<std::string> argv;
  std::string arg;
  while (std::getline(in, arg, '\0')) argv.push_back(arg);
  return argv;
}

// Waits until `pid` exits or INT/TERM/HUP arrives. Returns the signal, or 0.
// Follows resizes of the live row, and gives the terminal back while
// trainvitals is stopped (Ctrl-Z).
int WaitForExitOrSignal(int pid, TerminalRow* row) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGWINCH}) sigaddset(&set, s);
  int sfd = signalfd(-1, &set, SFD_CLOEXEC);
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  int got = 0;
  for (;;) {
    pollfd fds[2] = {{sfd, POLLIN, 0}, {pidfd, POLLIN, 0}};
    int n = ::poll(fds, pidfd >= 0 ? 2 : 1, row != nullptr || pidfd < 0 ? 250 : -1);
    if (n < 0 && errno != EINTR) break;
    if (row != nullptr) row->Follow();
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info{};
      if (::read(sfd, &info, sizeof(info)) != sizeof(info)) continue;
      int sig = static_cast<int>(info.ssi_signo);
      if (sig == SIGWINCH) continue;
      if (sig == SIGTSTP) {
        if (row != nullptr) row->Release();
        ::raise(SIGSTOP);
        if (row != nullptr) row->Reserve();
        continue;
      }
      got = sig;
      break;
    }
    if (pidfd >= 0 ? (fds[1].revents & POLLIN) != 0 : ProcessGone(pid)) break;
  }
  if (pidfd >= 0) ::close(pidfd);
  ::close(sfd);
  return got;
}

}  // namespace

void AddAttachCommand(CLI::App& app, Action* action) {
  auto* cmd = app.add_subcommand(
      "attach",
      "Monitor a running process and its whole process tree until it exits or you press Ctrl-C; "
      "write a run directory and print a summary. The process is not touched.");
  auto options = std::make_shared<MonitorOptions>();
  auto pid = std::make_shared<int>(0);
  options->AddTo(cmd);
  cmd->add_option("PID", *pid, "PID of the process to watch")
      ->required()
      ->check(CLI::PositiveNumber);
  cmd->callback([options, pid, action] {
    *action = [options, pid]() -> int {
      Config config = options->Resolve();
      CheckGpuChoice(config);
      if (ProcessGone(*pid)) {
        fmt::print(stderr, "trainvitals: attach: no process with PID {}\n", *pid);
        return 1;
      }
      std::vector<std::string> command = CommandOf(*pid);
      if (command.empty()) command.push_back(fmt::format("pid {}", *pid));
      if (config.name.empty()) config.name = fmt::format("attach-{}", *pid);
      std::unique_ptr<TerminalRow> row;
      if (!config.quiet) row = TerminalRow::Open(STDERR_FILENO);
      Session session(config, command, "attach");
      if (row) row->Reserve();
      session.ShowLiveStatus(row.get());
      // Its cgroup, when the job is alone in it: the job's totals from there.
      JobCgroupView cgroup = ExistingJobCgroup(Env::Default(), *pid);
      session.Start(*pid, &cgroup);
      int sig = WaitForExitOrSignal(*pid, row.get());
      if (sig != 0) session.AddEvent(EventType::kDetached, {{"signal", sig}});
      session.Finish(std::nullopt, std::nullopt);
      return 0;
    };
  });
}

}  // namespace tv

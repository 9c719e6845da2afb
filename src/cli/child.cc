#include "cli/child.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <linux/sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "run/job_cgroup.h"
#include "run/job_kill.h"

namespace tv {
namespace {

sigset_t SupervisorSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGWINCH, SIGTSTP}) sigaddset(&set, s);
  return set;
}

bool terminal_handed_over = false;

// Gives the terminal's foreground to process group `pgrp` (ignoring SIGTTOU,
// which a background caller would get).
void GiveTerminal(pid_t pgrp) {
  signal(SIGTTOU, SIG_IGN);
  ::tcsetpgrp(STDIN_FILENO, pgrp);
  signal(SIGTTOU, SIG_DFL);
}

// The child stopped (Ctrl-Z, or a TSTP forwarded to it): take the terminal
// back if we gave it away, stop as the shell's job, and when continued, hand
// the terminal back if we are in the foreground and continue the child's group.
void StopWithChild(int child, const SupervisorHooks& hooks) {
  if (hooks.on_stop) hooks.on_stop();
  if (terminal_handed_over) GiveTerminal(::getpgrp());
  ::raise(SIGSTOP);
  // Continued. `fg` gave us the terminal; `bg` did not: then the child stays
  // in the background too.
  if (terminal_handed_over && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp()) GiveTerminal(child);
  if (hooks.on_continue) hooks.on_continue();
  if (::kill(-child, SIGCONT) != 0) ::kill(child, SIGCONT);
}

// fork(), but with the child made in the cgroup `cgroup_fd` (when >= 0) by
// clone3's CLONE_INTO_CGROUP, where the kernel has it; `*in_cgroup` says
// whether it was. The child must then keep to async-signal-safe calls, as
// after any fork in a threaded program (glibc's fork handlers do not run).
pid_t ForkInto(int cgroup_fd, bool* in_cgroup) {
  *in_cgroup = false;
  if (cgroup_fd >= 0) {
    clone_args args{};
    args.flags = CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.cgroup = static_cast<uint64_t>(cgroup_fd);
    long pid = ::syscall(SYS_clone3, &args, sizeof(args));
    if (pid >= 0) {
      *in_cgroup = true;
      return static_cast<pid_t>(pid);
    }
    // ENOSYS or EINVAL (a kernel before 5.7, a seccomp filter), or a cgroup
    // the child may not be made in: a plain fork, which enters it by write.
  }
  return ::fork();
}

// Reads up to `size` bytes from `fd` into `out`, until they came or the
// pipe closed. How many came.
size_t ReadFull(int fd, void* out, size_t size) {
  char* at = static_cast<char*>(out);
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, at + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  return got;
}

}  // namespace

void BlockSupervisorSignals() {
  sigset_t set = SupervisorSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

ForkedChild ForkChild(const std::vector<std::string>& argv, const std::vector<int>& inherit_fds,
                      JobCgroup* cgroup, std::string* error) {
  ForkedChild forked;
  // Orphans of the job (a daemonised worker) are re-parented to us, not to init,
  // so they stay in view and are reaped.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) {
    *error = fmt::format("trainvitals: cannot create pipe: {}", std::strerror(errno));
    return forked;
  }
  UniqueFd report(pipefd[0]);
  bool own_terminal = ::isatty(STDIN_FILENO) && ::tcgetpgrp(STDIN_FILENO) == ::getpgrp();
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  bool in_unified = false;
  pid_t pid = ForkInto(cgroup != nullptr ? cgroup->unified_fd() : -1, &in_unified);
  if (pid < 0) {
    *error = fmt::format("trainvitals: cannot fork: {}", std::strerror(errno));
    ::close(pipefd[1]);
    return forked;
  }
  if (pid == 0) {
    ::close(pipefd[0]);
    ::setpgid(0, 0);
    if (own_terminal) {
      GiveTerminal(::getpid());
    }
    for (int fd : inherit_fds) ::fcntl(fd, F_SETFD, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // First the cgroups entered, then, only if exec fails, its errno.
    unsigned entered =
        cgroup != nullptr ? cgroup->EnterFromChild(in_unified ? cgroup->unified_bit() : 0) : 0;
    (void)!::write(pipefd[1], &entered, sizeof(entered));
    ::execvp(args[0], args.data());
    int err = errno;
    (void)!::write(pipefd[1], &err, sizeof(err));
    _exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before we signal it
  terminal_handed_over = own_terminal;
  ::close(pipefd[1]);
  unsigned entered = 0;
  size_t got = ReadFull(report.get(), &entered, sizeof(entered));
  if (cgroup != nullptr) cgroup->Entered(got == sizeof(entered) ? entered : 0);
  forked.pid = pid;
  forked.exec_report = std::move(report);
  return forked;
}

int AwaitExec(ForkedChild& child, const std::string& program, std::string* error) {
  int err = 0;
  size_t got = ReadFull(child.exec_report.get(), &err, sizeof(err));
  child.exec_report.reset();
  if (got != sizeof(err)) return 0;  // closed by the exec (or the child died before it)
  ::waitpid(child.pid, nullptr, 0);
  if (err == ENOENT) {
    *error = fmt::format("trainvitals: {}: command not found", program);
    return 127;
  }
  *error = fmt::format("trainvitals: {}: {}", program, std::strerror(err));
  return err == EACCES ? 126 : 127;
}

ChildExit SuperviseChild(int child, const SupervisorHooks& hooks, const ForceEnd& force) {
  using Clock = std::chrono::steady_clock;
  sigset_t set = SupervisorSignals();
  ChildExit result;
  const timespec tick{0, 250'000'000};
  std::optional<Clock::time_point> first_signal;  // the first INT or TERM
  int first_signo = 0;
  bool killed = false;
  auto kill_job = [&](const char* reason) {
    killed = true;
    double after_s = std::chrono::duration<double>(Clock::now() - *first_signal).count();
    if (hooks.on_kill) hooks.on_kill(reason, after_s);
    KillJobTree(child);
  };
  for (;;) {
    siginfo_t info{};
    // Woken only when something is due: the status line's refresh, or the
    // grace period's end (a quiet run's monitor then costs no wakeups here).
    bool due = hooks.on_tick || (first_signal && force.kill_after_s > 0 && !killed);
    int sig = due ? sigtimedwait(&set, &info, &tick) : sigwaitinfo(&set, &info);
    if (!killed && first_signal && force.kill_after_s > 0 &&
        Clock::now() - *first_signal >= std::chrono::duration<double>(force.kill_after_s)) {
      kill_job("grace_period");
    }
    if (sig < 0 || sig == SIGWINCH) {  // timeout, EINTR or resize
      if (hooks.on_tick) hooks.on_tick();
      continue;
    }
    if (sig != SIGCHLD) {
      // INT and TERM ask the job to end (HUP may only ask it to reload):
      // the same one twice is insisting.
      bool ending = sig == SIGINT || sig == SIGTERM;
      if (ending && sig == first_signo && !killed) {
        kill_job("second_signal");
        continue;
      }
      if (ending && !first_signal) {
        first_signal = Clock::now();
        first_signo = sig;
      }
      // Forward to the whole group: workers get it too, as they would from a terminal.
      if (::kill(-child, sig) != 0) ::kill(child, sig);
      if (hooks.on_signal) hooks.on_signal(sig);
      continue;
    }
    bool done = false;
    bool stopped = false;
    for (;;) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG | WUNTRACED);
      if (pid <= 0) break;
      if (pid != child) continue;  // a reaped orphan of the job
      if (WIFSTOPPED(status)) {
        stopped = true;
      } else if (WIFEXITED(status)) {
        result.code = WEXITSTATUS(status);
        done = true;
      } else if (WIFSIGNALED(status)) {
        result.signal = WTERMSIG(status);
        result.code = 128 + WTERMSIG(status);
        done = true;
      }
    }
    if (done) break;
    if (stopped) StopWithChild(child, hooks);
  }
  if (terminal_handed_over) GiveTerminal(::getpgrp());
  return result;
}

void ReapLeftovers(double grace_s) {
  using Clock = std::chrono::steady_clock;
  sigset_t set = SupervisorSignals();
  Clock::time_point end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(grace_s));
  for (;;) {
    pid_t pid = 0;
    while ((pid = ::waitpid(-1, nullptr, WNOHANG)) > 0) {
    }
    if (pid < 0) return;  // ECHILD: none is left
    auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(end - Clock::now());
    if (left.count() <= 0) return;
    const timespec wait{static_cast<time_t>(left.count() / 1'000'000'000),
                        static_cast<long>(left.count() % 1'000'000'000)};
    siginfo_t info{};
    int sig = sigtimedwait(&set, &info, &wait);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) return;
  }
}

}  // namespace tv

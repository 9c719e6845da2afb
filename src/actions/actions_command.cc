// The command action: the rule's argv run directly (no shell), with the
// alert in TRAINVITALS_ALERT_* variables and as JSON on stdin, its output
// appended to <run_dir>/alerts/<rule>.log, stopped at its timeout.
//
// `trainvitals run` reaps every ordinary child of its process (waitpid(-1):
// the job's orphans), which would take the command's exit status. So the
// command is the child of a keeper process, itself a "clone" child (made with
// no exit signal, which only waitpid(__WCLONE) sees) that passes the
// command's exit status on through a pipe.
//
// The command ends with the run: when the run ends (the action's hub stops)
// or its timeout passes, its process group gets SIGTERM, and SIGKILL
// kKillAfterTermS later. The keeper ends with its monitor: it asks for a
// parent-death signal, and when the monitor is gone (killed, even with
// SIGKILL) it does the same to the command's group itself.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "actions/actions_internal.h"

extern char** environ;

namespace tv::alert_actions {
namespace {

constexpr double kKillAfterTermS = 2;
// The keeper's parent-death signal (blocked, taken with sigtimedwait; the
// keeper checks getppid before it believes it).
constexpr int kMonitorGoneSignal = SIGUSR1;

// What runs between clone and exec is left uninstrumented by sanitizers.
#define TV_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))

// The program `name` names: itself when it has a '/', else the first
// executable file of that name on PATH.
std::optional<std::string> FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return std::nullopt;
    dirs.remove_prefix(colon + 1);
  }
}

std::string Quoted(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\$`*?;&|<>(){}[]!#~") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char ch : a) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    out += '\'';
  }
  return out;
}

void WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

// Writes `data` to the child's stdin until done, the child stops reading, or
// `deadline`; closes `fd`.
void FeedStdin(int fd, std::string_view data, SteadyClock::time_point deadline) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  while (!data.empty() && SteadyClock::now() < deadline) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 50);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EPIPE: it does not read its stdin
    }
  }
  ::close(fd);
  // Discard the SIGPIPE an EPIPE left pending (blocked on this thread).
  sigset_t pipe_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  timespec zero{0, 0};
  while (sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {
  }
}

std::string Describe(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* abbrev = sigabbrev_np(WTERMSIG(status));
    return abbrev != nullptr ? fmt::format("was killed by SIG{}", abbrev)
                             : fmt::format("was killed by signal {}", WTERMSIG(status));
  }
  return "ended";
}

class CommandAction final : public Action {
 public:
  using Action::Action;

  SteadyClock::duration StopGrace() const override {
    return std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(kKillAfterTermS + 1));
  }

  bool Deliver(const AlertNotice& notice) override {
    const AlertContext& context = hub().context();
    const std::vector<std::string>& argv = rule().actions.command;
    std::string log_path;
    int log_fd = OpenLog(&log_path);
    WriteAll(log_fd,
             fmt::format("=== {} {} {}{}: {}\n", Rfc3339(UnixNow()), StateName(notice.state),
                         rule().name, notice.gpu >= 0 ? fmt::format(" (GPU {})", notice.gpu) : "",
                         Quoted(argv)));
    bool ran = false;
    std::string outcome = Run(notice, context, argv, log_fd, &ran);
    if (!outcome.empty()) {
      WriteAll(log_fd, fmt::format("=== {}\n", outcome));
      Fail(fmt::format("{} {}{}", argv[0], outcome,
                       log_path.empty() ? "" : fmt::format(" (output in {})", log_path)));
    } else {
      WriteAll(log_fd, "=== exited with code 0\n");
    }
    ::close(log_fd);
    return ran;
  }

 private:
  // <run_dir>/alerts/<rule>.log for appending, or /dev/null without a run directory.
  int OpenLog(std::string* path) {
    const std::string& run_dir = hub().context().run_dir;
    if (!run_dir.empty()) {
      std::string dir = run_dir + "/alerts";
      ::mkdir(dir.c_str(), 0755);
      *path = dir + "/" + rule().name + ".log";
      int fd = ::open(path->c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
      if (fd >= 0) return fd;
      Fail(fmt::format("cannot write {}: {}; the command's output is lost", *path,
                       std::strerror(errno)));
      path->clear();
    }
    return ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  }

  // Runs the command to its end; "" when it exited with 0, else what went
  // wrong. *ran: whether it ran at all.
  std::string Run(const AlertNotice& notice, const AlertContext& context,
                  const std::vector<std::string>& argv, int log_fd, bool* ran) {
    std::optional<std::string> program = FindProgram(argv[0]);
    if (!program) return "could not be run: command not found";

    // Everything the child needs, made before clone: the child only makes system calls.
    std::vector<std::string> env_strings;
    auto set = [&](std::string_view key, std::string value) {
      env_strings.push_back(fmt::format("TRAINVITALS_ALERT_{}={}", key, value));
    };
    set("NAME", rule().name);
    set("STATE", std::string(StateName(notice.state)));
    set("SEVERITY", rule().severity);
    set("GPU", notice.gpu >= 0 ? std::to_string(notice.gpu) : "");
    set("VALUE", notice.value ? FormatValue(*notice.value) : "");
    set("THRESHOLD", rule().expr.finding.empty() ? FormatValue(rule().expr.threshold) : "");
    set("SUMMARY", notice.summary);
    set("STARTS_AT", fmt::format("{:.3f}", notice.starts_at));
    set("RUN", context.run);
    set("RUN_DIR", context.run_dir);
    std::vector<char*> envp;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      if (std::strncmp(*e, "TRAINVITALS_ALERT_", 18) != 0) envp.push_back(*e);
    }
    for (std::string& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::string input = NoticeJson(notice, context).dump() + "\n";

    Pipes pipes;
    if (!pipes.Open()) return fmt::format("could not be run: {}", strerror(errno));
    // A "clone" child (no exit signal, reaped with __WCLONE only) that never
    // execs: it runs the command as its own child and passes on its pid and
    // exit status through a pipe.
    pid_t monitor = ::getpid();
    pid_t keeper = static_cast<pid_t>(::syscall(SYS_clone, 0L, nullptr, nullptr, nullptr, nullptr));
    if (keeper == 0) {
      Keep(program->c_str(), args.data(), envp.data(), pipes, log_fd, monitor);
    }
    int clone_errno = errno;
    pipes.CloseChildEnds();
    if (keeper < 0) return fmt::format("could not be run: {}", strerror(clone_errno));
    struct Reap {
      pid_t pid;
      ~Reap() {
        while (::waitpid(pid, nullptr, __WCLONE) < 0 && errno == EINTR) {
        }
      }
    } reap{keeper};

    pid_t pid = 0;
    if (!ReadFull(pipes.status[0], &pid, sizeof(pid), std::nullopt)) return "could not be run";
    if (pid < 0) return fmt::format("could not be run: {}", strerror(-pid));
    int exec_errno = 0;
    if (ReadFull(pipes.exec_error[0], &exec_errno, sizeof(exec_errno), std::nullopt)) {
      return fmt::format("could not be run: {}", strerror(exec_errno));
    }
    *ran = true;

    auto started = SteadyClock::now();
    auto timeout = std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(rule().actions.command_timeout_s));
    FeedStdin(pipes.in[1], input, started + timeout);
    pipes.in[1] = -1;
    return Await(pid, pipes.status[0], started + timeout, log_fd);
  }

  // The pipes between this thread, the keeper and the command; all close-on-exec.
  struct Pipes {
    int in[2] = {-1, -1};          // the command's stdin
    int exec_error[2] = {-1, -1};  // errno of a failed exec; EOF when it ran
    int status[2] = {-1, -1};      // the command's pid, then its wait status
    bool Open() {
      return ::pipe2(in, O_CLOEXEC) == 0 && ::pipe2(exec_error, O_CLOEXEC) == 0 &&
             ::pipe2(status, O_CLOEXEC) == 0;
    }
    void CloseChildEnds() {
      CloseFd(&in[0]);
      CloseFd(&exec_error[1]);
      CloseFd(&status[1]);
    }
    ~Pipes() {
      for (int* fd : {&in[0], &in[1], &exec_error[0], &exec_error[1], &status[0], &status[1]}) {
        CloseFd(fd);
      }
    }
    static void CloseFd(int* fd) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  };

  // Reads `size` bytes; false on EOF, an error or at `deadline`.
  static bool ReadFull(int fd, void* out, size_t size,
                       std::optional<SteadyClock::time_point> deadline) {
    auto* p = static_cast<char*>(out);
    while (size > 0) {
      if (deadline) {
        auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - SteadyClock::now());
        if (left.count() <= 0) return false;
        pollfd pfd{fd, POLLIN, 0};
        int r = ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count() + 1, 50)));
        if (r == 0 || (r < 0 && errno == EINTR)) continue;
      }
      ssize_t n = ::read(fd, p, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      p += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  // The keeper: blocks every signal (a Ctrl-C meant for the job is not for
  // it), asks for kMonitorGoneSignal when its monitor dies, forks the command,
  // reports its pid, waits for it and reports how it ended. When the monitor
  // is gone first, it stops the command's group (StopGroup). This is a copy of
  // a threaded process: raw system calls only (a sanitizer's wrappers could
  // wait on a lock another thread held).
  [[noreturn]] TV_NO_SANITIZE static void Keep(const char* program, char** args, char** envp,
                                               const Pipes& pipes, int log_fd, pid_t monitor) {
    uint64_t all = ~uint64_t{0};
    ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, nullptr, sizeof(all));
    // A monitor that died before this took effect is seen by getppid below.
    ::syscall(SYS_prctl, PR_SET_PDEATHSIG, kMonitorGoneSignal, 0L, 0L, 0L);
    long pid = ::syscall(SYS_clone, long{SIGCHLD}, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) ExecChild(program, args, envp, pipes.in[0], log_fd, pipes.exec_error[1]);
    pid_t said = static_cast<pid_t>(pid < 0 ? -errno : pid);
    ::syscall(SYS_write, pipes.status[1], &said, sizeof(said));
    // Only the status pipe and the log stay open here: the command's stdin
    // must see EOF when this thread closes its end, and exec_error when the
    // command execs.
    const int others[] = {pipes.in[0], pipes.in[1], pipes.exec_error[0], pipes.exec_error[1],
                          pipes.status[0]};
    for (int fd : others) ::syscall(SYS_close, fd);
    if (pid < 0) ::syscall(SYS_exit_group, 1);
    int status = 0;
    for (;;) {
      if (::syscall(SYS_wait4, pid, &status, WNOHANG, nullptr) != 0) break;  // ended (or unseen)
      if (static_cast<pid_t>(::syscall(SYS_getppid)) != monitor) {
        status = StopGroup(static_cast<pid_t>(pid), log_fd);
        break;
      }
      WaitSignal(1000);  // the command's SIGCHLD, the monitor's death, or a second
    }
    ::syscall(SYS_write, pipes.status[1], &status, sizeof(status));
    ::syscall(SYS_exit_group, 0);
    __builtin_unreachable();
  }

  // In the keeper: waits up to `ms` for SIGCHLD or kMonitorGoneSignal (both blocked).
  TV_NO_SANITIZE static void WaitSignal(long ms) {
    uint64_t set = (uint64_t{1} << (SIGCHLD - 1)) | (uint64_t{1} << (kMonitorGoneSignal - 1));
    struct timespec wait {
      ms / 1000, (ms % 1000) * 1000000
    };
    ::syscall(SYS_rt_sigtimedwait, &set, nullptr, &wait, sizeof(set));
  }

  TV_NO_SANITIZE static long MonotonicMs() {
    struct timespec now {};
    ::syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000 + now.tv_nsec / 1000000;
  }

  TV_NO_SANITIZE static void Say(int fd, const char* text) {
    size_t n = 0;
    while (text[n] != '\0') ++n;
    ::syscall(SYS_write, fd, text, n);
  }

  // In the keeper, its monitor gone: SIGTERM to the command's group, then
  // SIGKILL kKillAfterTermS later to what is left of it (what the command
  // started may outlive it; the group's zombies are not told from the living
  // here, so the keeper waits the whole time: nobody waits for the keeper).
  // The command's wait status.
  TV_NO_SANITIZE static int StopGroup(pid_t pid, int log_fd) {
    Say(log_fd, "=== trainvitals ended while this ran: SIGTERM\n");
    if (::syscall(SYS_kill, -pid, SIGTERM) != 0) ::syscall(SYS_kill, pid, SIGTERM);
    long kill_at = MonotonicMs() + static_cast<long>(kKillAfterTermS * 1000);
    int status = 0;
    bool reaped = false;
    for (long left = kill_at - MonotonicMs(); left > 0; left = kill_at - MonotonicMs()) {
      if (!reaped && ::syscall(SYS_wait4, pid, &status, WNOHANG, nullptr) != 0) reaped = true;
      WaitSignal(left < 50 ? left : 50);
    }
    if (!reaped && ::syscall(SYS_wait4, pid, &status, WNOHANG, nullptr) != 0) reaped = true;
    if (!reaped) Say(log_fd, "=== still running: SIGKILL\n");
    if (::syscall(SYS_kill, -pid, SIGKILL) != 0 && !reaped) ::syscall(SYS_kill, pid, SIGKILL);
    if (!reaped) {
      while (::syscall(SYS_wait4, pid, &status, 0, nullptr) < 0 && errno == EINTR) {
      }
    }
    return status;
  }

  // In the command: stdin from the pipe, stdout and stderr to the log, its
  // own process group, default signals; then exec.
  [[noreturn]] TV_NO_SANITIZE static void ExecChild(const char* program, char** args, char** envp,
                                                    int in_fd, int log_fd, int err_fd) {
    ::syscall(SYS_setpgid, 0, 0);
    const int moves[][2] = {
        {in_fd, STDIN_FILENO}, {log_fd, STDOUT_FILENO}, {log_fd, STDERR_FILENO}};
    for (const auto& m : moves) {
      if (m[0] == m[1]) {
        ::syscall(SYS_fcntl, m[0], F_SETFD, 0);
      } else {
        ::syscall(SYS_dup3, m[0], m[1], 0);
      }
    }
    struct KernelSigaction {  // the kernel's struct sigaction
      void (*handler)(int);
      unsigned long flags;
      void (*restorer)();
      uint64_t mask;
    } dfl{SIG_DFL, 0, nullptr, 0};
    const int defaults[] = {SIGPIPE, SIGINT,  SIGTERM, SIGHUP, SIGQUIT,
                            SIGCHLD, SIGTTOU, SIGTTIN, SIGTSTP};
    for (int s : defaults) ::syscall(SYS_rt_sigaction, s, &dfl, nullptr, sizeof(uint64_t));
    uint64_t none = 0;
    ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, nullptr, sizeof(none));
    ::syscall(SYS_execve, program, args, envp);
    int err = errno;
    ::syscall(SYS_write, err_fd, &err, sizeof(err));
    ::syscall(SYS_exit_group, 127);
    __builtin_unreachable();
  }

  // After SIGTERM, the command itself ended: the rest of its group (what it
  // started) has until `kill_at` to follow, then gets SIGKILL.
  static void KillWhatIsLeft(pid_t pid, SteadyClock::time_point kill_at, int log_fd) {
    if (kill_at == SteadyClock::time_point::max()) return;  // SIGKILL was sent
    while (GroupHasLiveMember(pid)) {
      if (SteadyClock::now() >= kill_at) {
        WriteAll(log_fd, "=== its process group still runs: SIGKILL\n");
        ::kill(-pid, SIGKILL);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // Whether a process of group `pgid` runs (a zombie, waiting for its reaper,
  // does not).
  static bool GroupHasLiveMember(pid_t pgid) {
    if (::kill(-pgid, 0) != 0) return false;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.empty() || name[0] < '0' || name[0] > '9') continue;
      char stat[512];
      int fd = ::open((entry.path() / "stat").c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      ssize_t n = ::read(fd, stat, sizeof(stat) - 1);
      ::close(fd);
      if (n <= 0) continue;
      std::string_view text(stat, static_cast<size_t>(n));
      size_t paren = text.rfind(')');
      if (paren == std::string_view::npos) continue;
      char state = 0;
      int ppid = 0, group = 0;
      std::string rest(text.substr(paren + 1));
      if (std::sscanf(rest.c_str(), " %c %d %d", &state, &ppid, &group) == 3 && group == pgid &&
          state != 'Z' && state != 'X') {
        return true;
      }
    }
    return false;
  }

  // Waits for the command's status from the keeper; at `deadline` (or when
  // the run is over) SIGTERM to its group, SIGKILL 2 s later. "" when it
  // exited with 0.
  std::string Await(pid_t pid, int status_fd, SteadyClock::time_point deadline, int log_fd) {
    std::string stopped_why;
    auto until = deadline;
    for (;;) {
      int status = 0;
      // Short slices, to see the run end meanwhile.
      auto slice = std::min(until, SteadyClock::now() + std::chrono::milliseconds(100));
      if (ReadFull(status_fd, &status, sizeof(status), slice)) {
        if (!stopped_why.empty()) {
          KillWhatIsLeft(pid, until, log_fd);
          return fmt::format("{} ({})", stopped_why, Describe(status));
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
        return Describe(status);
      }
      auto now = SteadyClock::now();
      if (now < slice) return "ended unseen";  // EOF: the keeper is gone
      bool ended = hub().stopping();
      if (stopped_why.empty() && (now >= deadline || ended)) {
        stopped_why = now >= deadline ? fmt::format("timed out after {} s",
                                                    FormatValue(rule().actions.command_timeout_s))
                                      : std::string("was still running when the run ended");
        WriteAll(log_fd, fmt::format("=== {}: SIGTERM\n", stopped_why));
        if (::kill(-pid, SIGTERM) != 0) ::kill(pid, SIGTERM);
        until = now + std::chrono::duration_cast<SteadyClock::duration>(
                          std::chrono::duration<double>(kKillAfterTermS));
      } else if (!stopped_why.empty() && now >= until) {
        WriteAll(log_fd, "=== still running: SIGKILL\n");
        if (::kill(-pid, SIGKILL) != 0) ::kill(pid, SIGKILL);
        until = SteadyClock::time_point::max();
      }
    }
  }
};

}  // namespace

std::unique_ptr<Action> MakeCommandAction(std::shared_ptr<ActionHub> hub, const AlertRule& rule) {
  return std::make_unique<CommandAction>(std::move(hub), rule, "command");
}

}  // namespace tv::alert_actions

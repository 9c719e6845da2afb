// The command action: the rule's argv run directly (no shell), with the
// alert in TRAINVITALS_ALERT_* variables and as JSON on stdin, its output
// appended to <run_dir>/alerts/<rule>.log, stopped at its timeout.
//
// The child is made with clone() and no exit signal, and reaped with
// __WCLONE: `trainvitals run` reaps every ordinary child of its process
// (waitpid(-1), the job's orphans), which would take this one's exit status.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "analysis/alerts/actions_internal.h"

extern char** environ;

namespace tv::alert_actions {
namespace {

constexpr double kKillAfterTermS = 2;

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

  void Deliver(const AlertNotice& notice) override {
    const AlertContext& context = hub().context();
    const std::vector<std::string>& argv = rule().actions.command;
    std::string log_path;
    int log_fd = OpenLog(&log_path);
    WriteAll(log_fd,
             fmt::format("=== {} {} {}{}: {}\n", Rfc3339(UnixNow()), StateName(notice.state),
                         rule().name, notice.gpu >= 0 ? fmt::format(" (GPU {})", notice.gpu) : "",
                         Quoted(argv)));
    std::string outcome = Run(notice, context, argv, log_fd);
    if (!outcome.empty()) {
      WriteAll(log_fd, fmt::format("=== {}\n", outcome));
      Fail(fmt::format("{} {}{}", argv[0], outcome,
                       log_path.empty() ? "" : fmt::format(" (output in {})", log_path)));
    } else {
      WriteAll(log_fd, "=== exited with code 0\n");
    }
    ::close(log_fd);
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

  // Runs the command to its end; "" when it exited with 0, else what went wrong.
  std::string Run(const AlertNotice& notice, const AlertContext& context,
                  const std::vector<std::string>& argv, int log_fd) {
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
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::string input = NoticeJson(notice, context).dump() + "\n";

    int in_pipe[2];
    int err_pipe[2];
    if (::pipe2(in_pipe, O_CLOEXEC) != 0)
      return fmt::format("could not be run: {}", strerror(errno));
    if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
      int err = errno;
      ::close(in_pipe[0]);
      ::close(in_pipe[1]);
      return fmt::format("could not be run: {}", strerror(err));
    }
    // No exit signal: a "clone" child, which only waitpid(__WCLONE) reaps.
    pid_t pid = static_cast<pid_t>(::syscall(SYS_clone, 0L, nullptr, nullptr, nullptr, nullptr));
    if (pid == 0)
      ExecChild(program->c_str(), args.data(), envp.data(), in_pipe[0], log_fd, err_pipe[1]);
    int clone_errno = errno;
    ::close(in_pipe[0]);
    ::close(err_pipe[1]);
    if (pid < 0) {
      ::close(in_pipe[1]);
      ::close(err_pipe[0]);
      return fmt::format("could not be run: {}", strerror(clone_errno));
    }
    ::setpgid(pid, pid);  // also here, so the group exists before a timeout signals it
    int exec_errno = 0;
    ssize_t n;
    do {
      n = ::read(err_pipe[0], &exec_errno, sizeof(exec_errno));
    } while (n < 0 && errno == EINTR);
    ::close(err_pipe[0]);
    if (n == sizeof(exec_errno)) {
      ::close(in_pipe[1]);
      int status;
      while (::waitpid(pid, &status, __WCLONE) < 0 && errno == EINTR) {
      }
      return fmt::format("could not be run: {}", strerror(exec_errno));
    }

    auto started = SteadyClock::now();
    auto timeout = std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(rule().actions.command_timeout_s));
    FeedStdin(in_pipe[1], input, started + timeout);
    return Await(pid, started + timeout, log_fd);
  }

  // In the child: stdin from the pipe, stdout and stderr to the log, its own
  // process group, default signals; then exec. Only system calls here.
  [[noreturn]] static void ExecChild(const char* program, char** args, char** envp, int in_fd,
                                     int log_fd, int err_fd) {
    ::setpgid(0, 0);
    ::dup2(in_fd, STDIN_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGTTOU, SIGTTIN, SIGTSTP}) {
      ::sigaction(s, &dfl, nullptr);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
#ifdef SYS_close_range
    ::syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
#endif
    ::execve(program, args, envp);
    int err = errno;
    (void)!::write(err_fd, &err, sizeof(err));
    ::_exit(127);
  }

  // Waits for the child; at `deadline` (or when the run is over) SIGTERM to its
  // group, SIGKILL 2 s later. "" when it exited with 0.
  std::string Await(pid_t pid, SteadyClock::time_point deadline, int log_fd) {
    int status = 0;
    auto pause = std::chrono::milliseconds(1);
    std::string stopped_why;
    std::optional<SteadyClock::time_point> kill_at;
    for (;;) {
      pid_t r = ::waitpid(pid, &status, WNOHANG | __WCLONE);
      if (r == pid) break;
      if (r < 0 && errno != EINTR) return "could not be waited for";
      auto now = SteadyClock::now();
      if (!kill_at && (now >= deadline || hub().abandoned())) {
        stopped_why = now >= deadline ? fmt::format("timed out after {} s",
                                                    FormatValue(rule().actions.command_timeout_s))
                                      : std::string("was still running when the run ended");
        WriteAll(log_fd, fmt::format("=== {}: SIGTERM\n", stopped_why));
        if (::kill(-pid, SIGTERM) != 0) ::kill(pid, SIGTERM);
        kill_at = now + std::chrono::duration_cast<SteadyClock::duration>(
                            std::chrono::duration<double>(kKillAfterTermS));
      } else if (kill_at && now >= *kill_at) {
        WriteAll(log_fd, "=== still running: SIGKILL\n");
        if (::kill(-pid, SIGKILL) != 0) ::kill(pid, SIGKILL);
        kill_at = SteadyClock::time_point::max();
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
    if (!stopped_why.empty()) return fmt::format("{} ({})", stopped_why, Describe(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
    return Describe(status);
  }
};

}  // namespace

std::unique_ptr<Action> MakeCommandAction(std::shared_ptr<ActionHub> hub, const AlertRule& rule) {
  return std::make_unique<CommandAction>(std::move(hub), rule, "command");
}

}  // namespace tv::alert_actions

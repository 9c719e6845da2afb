#include "sources/stack_capture.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>

#include "markers/protocol.h"
#include "markers/stack_text.h"

namespace tv {
namespace {

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

constexpr int kMaxScriptLines = 100000;

// Up to `max` bytes of `path` from `offset` into `*out`; false when it cannot be opened.
bool ReadFrom(const std::string& path, long long offset, size_t max, std::string* out) {
  out->clear();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  char buffer[16384];
  while (out->size() < max) {
    ssize_t n = ::pread(fd, buffer, std::min(sizeof(buffer), max - out->size()),
                        static_cast<off_t>(offset + static_cast<long long>(out->size())));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out->append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

bool ReadSmallFile(const std::string& path, std::string* out) {
  return ReadFrom(path, 0, 65536, out) && !out->empty();
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

long long FileSize(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return st.st_size;
}

// Whether `pid` still catches `signal` (its handler is installed).
bool Catches(int pid, int signal) {
  std::string status;
  if (!ReadSmallFile(fmt::format("/proc/{}/status", pid), &status)) return false;
  size_t at = status.find("\nSigCgt:");
  if (at == std::string::npos) return false;
  uint64_t mask = std::strtoull(status.c_str() + at + 8, nullptr, 16);
  return ((mask >> (signal - 1)) & 1) != 0;
}

// What a process that did not answer is doing, from /proc/PID/stat.
std::string StateOf(int pid) {
  std::string stat;
  if (!ReadSmallFile(fmt::format("/proc/{}/stat", pid), &stat)) return "gone";
  size_t paren = stat.rfind(')');
  char state = paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2] : '?';
  switch (state) {
    case 'R':
      return "running";
    case 'S':
      return "sleeping";
    case 'D':
      return "in uninterruptible I/O";
    case 'T':
      return "stopped";
    case 't':
      return "traced";
    case 'Z':
    case 'X':
      return "gone";
    default:
      return std::string(1, state);
  }
}

// Line `line` of `file` as process `pid` sees it (its root: a container's
// files), read only when that process's user may read it: the name came from
// the process, and this one may be root.
std::string ScriptLine(int pid, const std::string& file, int line) {
  if (file.empty() || file[0] != '/' || line <= 0 || line > kMaxScriptLines) return "";
  struct stat proc {};
  if (::stat(fmt::format("/proc/{}", pid).c_str(), &proc) != 0) return "";
  std::string path = fmt::format("/proc/{}/root{}", pid, file);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  bool readable =
      (st.st_mode & S_IROTH) != 0 || (st.st_uid == proc.st_uid && (st.st_mode & S_IRUSR) != 0);
  if (!readable) return "";
  std::ifstream in(path);
  std::string text;
  for (int i = 0; i < line && std::getline(in, text); ++i) {
  }
  return in ? text : std::string();
}

}  // namespace

StackCapture::StackCapture(std::string socket_path, std::string run_dir)
    : socket_path_(std::move(socket_path)), run_dir_(std::move(run_dir)) {}

StackCapture::~StackCapture() {
  for (const Target& t : targets_) {
    if (t.pidfd >= 0) ::close(t.pidfd);
  }
}

void StackCapture::Offer(int pid, int rank, int signal) {
  if (pid <= 0 || signal < kStacksSignalMin || signal > kStacksSignalMax) return;
  Forget(pid);
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  targets_.push_back(Target{pid, rank, signal, pidfd});
}

void StackCapture::Forget(int pid) {
  std::erase_if(targets_, [pid](const Target& t) {
    if (t.pid != pid) return false;
    if (t.pidfd >= 0) ::close(t.pidfd);
    return true;
  });
}

bool StackCapture::Request(std::string_view reason, std::string_view id) {
  if (targets_.empty()) return false;
  if (reason == "stalled" && stalled_captures_ >= kMaxStalledCaptures) return false;
  // Ranks stalled together open one after another: one capture has them all.
  auto same = [reason](const Capture& c) { return reason == "stalled" && c.reason == reason; };
  if ((current_ && same(*current_)) || std::any_of(queued_.begin(), queued_.end(), same)) {
    return true;
  }
  if (current_ && queued_.size() >= kMaxQueued) return false;
  if (reason == "stalled") ++stalled_captures_;
  Capture c{std::string(reason), std::string(id), {}, std::nullopt};
  if (current_) {
    queued_.push_back(std::move(c));
  } else {
    Start(std::move(c));
  }
  return true;
}

void StackCapture::Start(Capture c) {
  ++captures_;
  for (const Target& t : targets_) {
    Asked& a = c.asked.emplace_back();
    a.target = t;
    // The pidfd dup'd: the process may be forgotten before the capture ends.
    a.target.pidfd = t.pidfd >= 0 ? ::fcntl(t.pidfd, F_DUPFD_CLOEXEC, 0) : -1;
    a.from = FileSize(StacksPathFor(socket_path_, t.pid));
    if (!Catches(t.pid, t.signal)) continue;
    int rc = a.target.pidfd >= 0 ? static_cast<int>(::syscall(SYS_pidfd_send_signal, a.target.pidfd,
                                                              t.signal, nullptr, 0))
                                 : ::kill(t.pid, t.signal);
    a.sent = rc == 0;
  }
  current_ = std::move(c);
}

bool StackCapture::Answered(Asked& a) const {
  if (!a.sent) return true;
  long long size = FileSize(StacksPathFor(socket_path_, a.target.pid));
  bool still = size > a.from && size == a.seen;
  a.seen = size;
  return still;
}

void StackCapture::Poll(double now, std::vector<TrainingEvent>* events) {
  if (!current_) return;
  if (!current_->deadline) current_->deadline = now + kWait_s;
  bool all = true;
  for (Asked& a : current_->asked) all = Answered(a) && all;
  if (!all && now < *current_->deadline) return;
  Finish(now, events);
  current_.reset();
  if (!queued_.empty()) {
    Capture next = std::move(queued_.front());
    queued_.erase(queued_.begin());
    Start(std::move(next));
  }
}

std::string StackCapture::Save(const Asked& a, std::string_view text) const {
  std::string dir = run_dir_ + "/stacks";
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return "";
  std::string rank = a.target.rank >= 0 ? fmt::format("-rank{}", a.target.rank) : "";
  std::string name =
      fmt::format("stacks/{}-{}{}-{}.txt", captures_, current_->reason, rank, a.target.pid);
  int fd = ::open((run_dir_ + "/" + name).c_str(),
                  O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return "";
  bool whole = WriteAll(fd, text);
  ::close(fd);
  return whole ? name : "";
}

void StackCapture::Finish(double now, std::vector<TrainingEvent>* events) {
  for (Asked& a : current_->asked) {
    std::string text;
    if (a.sent) {
      ReadFrom(StacksPathFor(socket_path_, a.target.pid), a.from, kMaxBytes, &text);
    }
    TrainingEvent& e = events->emplace_back();
    e.type = EventType::kStacks;
    e.pid = a.target.pid;
    e.rank = a.target.rank;
    e.t = now;
    StackWait& w = e.stacks.emplace();
    std::vector<StackThread> threads = ParseStacks(text);
    int pid = a.target.pid;
    w = WhereItWaits(
        threads, [pid](const std::string& file, int line) { return ScriptLine(pid, file, line); });
    w.reason = current_->reason;
    w.request = current_->id;
    if (w.waits_in.empty()) {
      w.waits_in = "no-answer";
      w.state = StateOf(pid);
    } else {
      w.file = Save(a, text);
    }
    if (a.target.pidfd >= 0) ::close(a.target.pidfd);
  }
}

}  // namespace tv

#include "run/job_kill.h"

#include <dirent.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <map>
#include <sstream>

namespace tv {
namespace {

std::vector<ProcParents> ReadAllParents() {
  std::vector<ProcParents> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    std::ifstream in(fmt::format("/proc/{}/stat", e->d_name));
    std::ostringstream text;
    text << in.rdbuf();
    if (std::optional<ProcParents> p = ParseProcParents(text.str())) out.push_back(*p);
  }
  ::closedir(dir);
  return out;
}

}  // namespace

std::optional<ProcParents> ParseProcParents(std::string_view text) {
  size_t open = text.find(" (");
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  ProcParents p;
  auto [end, ec] = std::from_chars(text.data(), text.data() + open, p.pid);
  if (ec != std::errc() || end != text.data() + open) return std::nullopt;
  // ") S PPID PGRP ..."
  std::string_view rest = text.substr(close + 1);
  int fields[2] = {0, 0};
  size_t pos = rest.find_first_not_of(' ');
  if (pos == std::string_view::npos) return std::nullopt;
  pos = rest.find(' ', pos);  // past the state
  for (int& f : fields) {
    if (pos == std::string_view::npos) return std::nullopt;
    size_t start = rest.find_first_not_of(' ', pos);
    if (start == std::string_view::npos) return std::nullopt;
    size_t stop = rest.find(' ', start);
    if (stop == std::string_view::npos) stop = rest.size();
    auto [e, c] = std::from_chars(rest.data() + start, rest.data() + stop, f);
    if (c != std::errc() || e != rest.data() + stop) return std::nullopt;
    pos = stop;
  }
  p.ppid = fields[0];
  p.pgrp = fields[1];
  return p;
}

std::vector<int> JobProcesses(const std::vector<ProcParents>& procs, int self, int self_pgrp) {
  std::multimap<int, const ProcParents*> children;
  for (const ProcParents& p : procs) children.emplace(p.ppid, &p);
  std::vector<int> out;
  std::vector<int> todo;
  auto [first, last] = children.equal_range(self);
  for (auto it = first; it != last; ++it) {
    if (it->second->pgrp != self_pgrp) todo.push_back(it->second->pid);
  }
  while (!todo.empty()) {
    int pid = todo.back();
    todo.pop_back();
    if (pid == self) continue;
    out.push_back(pid);
    auto [from, to] = children.equal_range(pid);
    for (auto it = from; it != to; ++it) todo.push_back(it->second->pid);
  }
  return out;
}

int KillJobTree(int job_pgrp) {
  int signalled = 0;
  ::kill(-job_pgrp, SIGKILL);
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<int> pids = JobProcesses(ReadAllParents(), ::getpid(), ::getpgrp());
    for (int pid : pids) {
      if (::kill(pid, SIGKILL) == 0 && pass == 0) ++signalled;
    }
    if (pids.empty()) break;
  }
  return signalled;
}

}  // namespace tv

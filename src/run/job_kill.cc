#include "run/job_kill.h"

#include <dirent.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <string>

#include "core/env.h"
#include "sources/proc_pid_parse.h"

namespace tv {
namespace {

std::vector<ProcParents> ReadAllParents() {
  std::vector<ProcParents> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  std::string text;
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    if (!Env::Default()->ReadFile(fmt::format("/proc/{}/stat", e->d_name).c_str(), &text).ok()) {
      continue;  // gone meanwhile
    }
    if (std::optional<ProcStat> st = ParseProcStat(text)) {
      out.push_back({st->pid, st->ppid, st->pgrp});
    }
  }
  ::closedir(dir);
  return out;
}

}  // namespace

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

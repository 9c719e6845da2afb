#include "run/still_running.h"

#include <fmt/format.h>

#include <optional>

#include "core/env.h"
#include "sources/proc_pid_parse.h"

namespace tv {

bool StillRunning(int pid, const std::string& name) {
  std::string stat;
  if (!Env::Default()->ReadFile(fmt::format("/proc/{}/stat", pid).c_str(), &stat).ok()) {
    return false;
  }
  std::optional<ProcStat> st = ParseProcStat(stat);
  return st && st->state != 'Z' && st->comm == name;
}

}  // namespace tv

// /proc/PID/stat and /proc/PID/task/TID/children.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "sources/proc_pid_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto stat = tv::ParseProcStat(text)) {
    // comm lies between the first '(' and the last ')' of the text.
    if (stat->comm.size() > text.size()) std::abort();
  }
  std::vector<int> pids;
  tv::AppendChildPids(text, &pids);
  for (int pid : pids) {
    if (pid <= 0) std::abort();
  }
  return 0;
}

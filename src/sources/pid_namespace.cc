#include "sources/pid_namespace.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string>

namespace tv {

bool PidMapper::InJob(int pid, const std::vector<int>& job_pids) {
  auto in_job = [&](int p) { return std::binary_search(job_pids.begin(), job_pids.end(), p); };
  if (in_job(pid)) return true;
  auto it = cache_.find(pid);
  if (it == cache_.end()) {
    std::vector<int> ns;
    if (env_->ReadFile(fmt::format("/proc/{}/status", pid).c_str(), &buf_).ok()) {
      ns = ParseNsPids(buf_);
    }
    it = cache_.emplace(pid, std::move(ns)).first;
  }
  return std::any_of(it->second.begin(), it->second.end(), in_job);
}

void PidMapper::Retain(const std::vector<int>& alive) {
  for (auto it = cache_.begin(); it != cache_.end();) {
    if (std::find(alive.begin(), alive.end(), it->first) == alive.end()) {
      it = cache_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace tv

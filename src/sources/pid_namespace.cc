#include "sources/pid_namespace.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string>

namespace tv {

std::vector<int> ParseNsPids(std::string_view status) {
  std::vector<int> pids;
  size_t at = status.find("\nNSpid:");
  if (at == std::string_view::npos) {
    if (!status.starts_with("NSpid:")) return pids;
    at = 0;
  } else {
    at += 1;
  }
  std::string_view line = status.substr(at + 6);
  line = line.substr(0, line.find('\n'));
  const char* p = line.data();
  const char* end = p + line.size();
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    int v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) break;
    pids.push_back(v);
    p = next;
  }
  return pids;
}

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

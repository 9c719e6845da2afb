#include "analysis/processes.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/round.h"

namespace tv {
namespace {

constexpr size_t kKeepDone = 64;  // exited processes kept per ranking

}  // namespace

void ProcessTable::OnSample(const Sample& sample, std::vector<Event>* events) {
  (void)events;
  const JobSample& job = sample.job;
  for (const ProcessInfo& p : job.exited) {
    auto it = live_.find(p.pid);
    if (it == live_.end()) continue;
    it->second.exited = true;
    done_.push_back(std::move(it->second));
    live_.erase(it);
  }
  if (done_.size() > 4 * kKeepDone) Prune();
  for (const ProcessInfo& p : job.started) {
    Entry& e = live_[p.pid];
    e = Entry{};
    e.pid = p.pid;
    e.ppid = p.ppid;
    e.name = p.name;
    e.command = p.cmdline.empty() ? p.name : p.cmdline;
  }
  for (const ProcessInfo& p : job.execed) {  // forked, then ran a new program
    auto it = live_.find(p.pid);
    if (it == live_.end()) continue;
    it->second.name = p.name;
    it->second.command = p.cmdline.empty() ? p.name : p.cmdline;
  }
  // Between readings of the processes' files the members are those of the
  // last reading, already taken.
  if (job.process_files_age_s.value_or(0) == 0) {
    for (const ProcessUsage& u : job.members) {
      auto it = live_.find(u.pid);
      if (it == live_.end()) continue;
      Entry& e = it->second;
      e.ppid = u.ppid;
      e.cpu_seconds = u.cpu_seconds;
      e.memory_bytes_max = std::max(e.memory_bytes_max, u.memory_bytes);
      e.rss_bytes_max = std::max(e.rss_bytes_max, u.rss_bytes);
      e.zombie = u.zombie;
    }
  }
  for (const RankSteps& r : sample.training.ranks) training_[r.pid].rank = r.rank;
  for (const TrainingEvent& m : sample.training.events) {
    Training& t = training_[m.pid];
    t.rank = m.rank;
    if (m.type == EventType::kClientEnd && !m.exception.empty() && !exception_) {
      exception_ = ExceptionRecord{.type = m.exception, .message = m.message, .pid = m.pid};
      if (m.rank >= 0) exception_->rank = m.rank;
    }
  }
}

std::string ProcessTable::Role(const Entry& e) const {
  if (auto t = training_.find(e.pid); t != training_.end()) {
    return t->second.rank >= 0 ? "rank " + std::to_string(t->second.rank) : "main";
  }
  if (e.pid == root_pid_) return training_.empty() ? "main" : "launcher";
  auto parent_is_training = training_.count(e.ppid) > 0;
  if (!parent_is_training) return "";
  // A fork of the training process that did not exec: its data loading worker.
  auto parent = live_.find(e.ppid);
  if (parent != live_.end() && parent->second.command == e.command) return "DataLoader worker";
  if (e.command.find("multiprocessing") != std::string::npos) return "worker";
  return "";
}

ProcessRecord ProcessTable::Record(const Entry& e) const {
  return ProcessRecord{.pid = e.pid,
                       .ppid = e.ppid,
                       .role = Role(e),
                       .name = e.name,
                       .command = e.command,
                       .cpu_seconds = RoundTo(e.cpu_seconds, 100),
                       .memory_bytes_max = e.memory_bytes_max,
                       .rss_bytes_max = e.rss_bytes_max,
                       .exited = e.exited};
}

void ProcessTable::Prune() {
  std::vector<size_t> order(done_.size());
  std::set<size_t> keep;
  auto take = [&](auto key) {
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    size_t n = std::min(kKeepDone, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<long>(n), order.end(),
                      [&](size_t a, size_t b) { return key(done_[a]) > key(done_[b]); });
    keep.insert(order.begin(), order.begin() + static_cast<long>(n));
  };
  take([](const Entry& e) { return e.cpu_seconds; });
  take([](const Entry& e) { return e.memory_bytes_max; });
  std::vector<Entry> kept;
  kept.reserve(keep.size());
  for (size_t i : keep) kept.push_back(std::move(done_[i]));
  done_ = std::move(kept);
}

TopProcesses ProcessTable::Top(size_t n) const {
  std::vector<const Entry*> all;
  for (const auto& [pid, e] : live_) all.push_back(&e);
  for (const Entry& e : done_) all.push_back(&e);
  auto pick = [&](auto key) {
    std::vector<const Entry*> sorted = all;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&](const Entry* a, const Entry* b) { return key(*a) > key(*b); });
    std::vector<ProcessRecord> out;
    for (size_t i = 0; i < sorted.size() && i < n; ++i) out.push_back(Record(*sorted[i]));
    return out;
  };
  return TopProcesses{.by_cpu = pick([](const Entry& e) { return e.cpu_seconds; }),
                      .by_memory = pick([](const Entry& e) { return e.memory_bytes_max; })};
}

void ProcessTable::AddTo(RunSummary* summary) const {
  RunProcesses& part = summary->processes;
  part = RunProcesses{.top = Top(kTopProcesses), .exception = exception_};
  if (still_running_) part.leaked = StillRunning(still_running_);
}

std::vector<ProcessRecord> ProcessTable::StillRunning(
    const std::function<bool(int, const std::string&)>& running) const {
  std::vector<ProcessRecord> out;
  for (const auto& [pid, e] : live_) {
    if (pid == root_pid_ || e.zombie || !running(pid, e.name)) continue;
    out.push_back(ProcessRecord{.pid = pid, .role = Role(e), .name = e.name, .command = e.command});
  }
  return out;
}

}  // namespace tv

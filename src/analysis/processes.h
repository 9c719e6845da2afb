// ProcessTable: who in the job's tree used what. From the process source's
// per-member figures and the markers it keeps, per process, its command, its
// role where known (main, launcher, rank N, DataLoader worker, worker), its CPU
// time and its peak memory; the processes still running when the command
// ended (leaked workers); and the exception a training process said it was
// dying of (docs/markers.md, `bye`). Its part of summary.json: "processes"
// (the top kTopProcesses), "leaked" once the command ended (set_command_ended)
// and "exception" when a process said one.
//
// Thread safety: a SampleObserver, fed on the sampler thread; the accessors,
// set_command_ended and AddTo after the sampler stopped.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/sampler.h"
#include "store/process_record.h"
#include "store/summary_part.h"

namespace tv {

class ProcessTable final : public SampleObserver, public SummaryPart {
 public:
  // `root_pid`: the command's own process (role "main" or "launcher").
  explicit ProcessTable(int root_pid = 0) : root_pid_(root_pid) {}
  void set_root_pid(int pid) { root_pid_ = pid; }

  void OnSample(const Sample& sample, std::vector<Event>* events) override;

  // The `n` processes that used the most CPU time and the `n` with the
  // highest peak memory.
  TopProcesses Top(size_t n) const;
  // Members at the last sample that `running(pid, name)` says still run.
  std::vector<ProcessRecord> StillRunning(
      const std::function<bool(int, const std::string&)>& running) const;
  // The first process that said it died of an exception; none when none did.
  const std::optional<ExceptionRecord>& Exception() const { return exception_; }

  // The processes summary.json lists by CPU time and by memory.
  static constexpr size_t kTopProcesses = 5;
  // The command has ended: AddTo lists as "leaked" the members that
  // `running(pid, name)` says still run (StillRunning).
  void set_command_ended(std::function<bool(int, const std::string&)> running) {
    still_running_ = std::move(running);
  }
  void AddTo(RunSummary* summary) const override;

 private:
  struct Entry {
    int pid = 0;
    int ppid = 0;
    std::string name;
    std::string command;
    double cpu_seconds = 0;
    double memory_bytes_max = 0;
    double rss_bytes_max = 0;
    bool zombie = false;
    bool exited = false;
  };
  struct Training {
    int rank = -1;
    std::string command;  // its command when it said hello
  };

  std::string Role(const Entry& e) const;
  ProcessRecord Record(const Entry& e) const;
  // Keeps done_ from growing without bound: only the leaders stay.
  void Prune();

  int root_pid_;
  std::map<int, Entry> live_;         // by PID
  std::vector<Entry> done_;           // exited
  std::map<int, Training> training_;  // processes that sent markers, by PID
  std::optional<ExceptionRecord> exception_;
  std::function<bool(int, const std::string&)> still_running_;  // set once the command ended
};

}  // namespace tv

// oom: the job died of memory. Three ways to know: the kernel's OOM killer
// counted a kill in the job's cgroup; the command was killed by SIGKILL while
// the job was at its memory limit (the OOM killer where no cgroup count can be
// read); a training process said it died of the framework's out-of-memory
// error (client_end). The evidence holds the last minutes of memory figures
// (oom.h).
#pragma once

#include <string>

#include "analysis/findings/oom.h"
#include "analysis/findings/rule.h"

namespace tv {

class OomRule : public Rule {
 public:
  // A client_end with an out-of-memory error.
  void OnMark(const Mark& m, RuleContext& cx) override;
  // Keeps the memory figures for the evidence.
  void OnFrame(const Frame& f, RuleContext& cx) override;
  // How the job ended (run.job_end).
  void Finish(RuleContext& cx) override;

 private:
  void Open(double t, const FindingSubject& subject, nlohmann::ordered_json cause,
            std::string message, RuleContext& cx);

  MemoryTrail memory_trail_;
  Tracker tracker_;
};

}  // namespace tv

// StackCapture: the training processes' Python stacks, asked for and read
// (docs/markers.md "Stacks"). A process that offers them (a `stacks` marker)
// writes all its threads' stacks to its file beside the marker socket when it
// receives its real-time signal; a capture signals every such process, waits
// until each file stops growing (or kWait_s), copies each answer into the run
// directory (stacks/<n>-<reason>[-rank<R>]-<pid>.txt) and makes one `stacks`
// event per process saying where its main thread waits.
//
// Only a process that offered is signalled, through a pidfd taken while its
// connection was open, and only while its handler is still installed
// (/proc/PID/status SigCgt): a real-time signal's default action ends a
// process, so one that exec'd or never offered is never sent one.
//
// Thread safety: none; the marker source's (sampler) thread owns it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/training_sample.h"

namespace tv {

class StackCapture {
 public:
  static constexpr double kWait_s = 5;           // then a process that wrote nothing did not answer
  static constexpr int kMaxStalledCaptures = 8;  // a run's captures for `stalled`
  static constexpr size_t kMaxQueued = 4;        // requests waiting for the capture under way
  static constexpr size_t kMaxBytes = 1 << 20;   // read of one process's answer

  // `socket_path`: the marker socket the files lie beside; `run_dir`: where
  // the answers go.
  StackCapture(std::string socket_path, std::string run_dir);
  ~StackCapture();
  StackCapture(const StackCapture&) = delete;
  StackCapture& operator=(const StackCapture&) = delete;

  // Process `pid` (the connection's peer) writes its stacks on `signal`.
  void Offer(int pid, int rank, int signal);
  // It is gone (said bye, or its connection hung up).
  void Forget(int pid);
  // Asks every process that offered for its stacks, now or after the capture
  // under way; `reason` "stalled" or "request" (with the asker's `id`). A
  // stall while a capture for one is under way or waiting joins it. False
  // when nothing will be asked (none offered, or the limits above).
  bool Request(std::string_view reason, std::string_view id);
  // Reads the answers; appends the `stacks` events of a capture that is done.
  void Poll(double now, std::vector<TrainingEvent>* events);

 private:
  struct Target {
    int pid = 0;
    int rank = -1;
    int signal = 0;
    int pidfd = -1;
  };
  struct Asked {
    Target target;
    long long from = 0;   // the file's size when asked: the answer follows it
    long long seen = -1;  // its size at the previous poll
    bool sent = false;
  };
  struct Capture {
    std::string reason;
    std::string id;
    std::vector<Asked> asked;
    std::optional<double> deadline;
  };
  void Start(Capture capture);
  bool Answered(Asked& a) const;
  void Finish(double now, std::vector<TrainingEvent>* events);
  std::string Save(const Asked& a, std::string_view text) const;

  std::string socket_path_;
  std::string run_dir_;
  std::vector<Target> targets_;
  std::optional<Capture> current_;
  std::vector<Capture> queued_;
  int captures_ = 0;
  int stalled_captures_ = 0;
};

}  // namespace tv

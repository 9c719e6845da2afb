// MarkerSource: reads what the training processes say (markers/protocol.h):
// drains the datagram socket and reads every step slot, each tick. Fills
// Sample::training and the framework allocator's figures of each GPU, so it runs
// after the GPU source. Malformed datagrams are counted and the first one is
// said once; they never stop the run.
//
// Bounded whatever the senders do (docs/markers.md): at most kMaxPerTick
// datagrams and kMaxBytesPerTick bytes are parsed a tick (the rest wait), at
// most kMaxProcesses processes are remembered (those that said goodbye go
// first), kMaxScalars scalar names and kMaxOpenPhases open phases per process.
// A process's step slot is freed when it says goodbye or its connection hangs
// up (it exited, even killed), its count kept, so a long run with many
// short-lived clients never runs out of slots. Each slot's data-wait time
// becomes that process's share of the tick spent waiting for data
// (data_wait.h), measured on CLOCK_MONOTONIC like the slot's stamps.
//
// The back-channel: PublishRisk() hands a memory risk to every training
// process (markers/risk.h); the latest is remembered and signalled to the
// processes that claim a slot later, at the next Read. RequestStop() sends an
// alert's request to stop the same way; once sent it stays the latest record,
// so a process that reads late, or starts later, stops too.
//
// Profiles: RequestProfile() (a finding) or a `request` marker
// (`trainvitals profile`) asks the processes to profile some steps; the
// `profile` marker each sends when done becomes a `profile` event with what
// its trace shows (trace_figures.h).
//
// Stacks: a process that offers its Python stacks (a `stacks` marker) is
// asked for them when RequestStacks() is called (the `stalled` finding) or a
// `request` marker comes (`trainvitals stacks`); see stack_capture.h.
//
// Thread safety: Read and Flush on the sampler thread; PublishRisk and
// RequestStop on the sampler thread too (the findings' risk handler, the
// alerts' stop handler), or on the controlling thread once the sampler
// stopped: the back-channel has its own lock. Neither blocks on I/O.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/open_phases.h"
#include "core/source.h"
#include "markers/endpoint.h"
#include "sources/data_wait.h"
#include "sources/profile_requests.h"
#include "sources/stack_capture.h"
#include "sources/trace_reads.h"

namespace tv {

class MarkerSource final : public Source {
 public:
  static constexpr int kMaxPerTick = 4096;
  static constexpr size_t kMaxBytesPerTick = 1 << 20;
  static constexpr size_t kMaxProcesses = 1024;
  static constexpr size_t kMaxScalars = 256;
  static constexpr size_t kMaxOpenPhases = OpenPhases::kMax;
  static constexpr int64_t kDefaultProfileSteps = 20;

  // `run_dir`: where the processes' stacks go when asked for (stack_capture.h).
  explicit MarkerSource(MarkerEndpoint* endpoint, std::string run_dir = "")
      : endpoint_(endpoint),
        stacks_(endpoint->socket_path(), run_dir),
        profiles_(endpoint),
        traces_(std::move(run_dir)) {}
  std::string_view name() const override { return "markers"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;
  bool Flush(Sample* out) override;

  // Tells every training process, now and those that come later, about `risk`;
  // nothing once a stop was requested (the training is stopping).
  void PublishRisk(const MemoryRisk& risk);
  // Asks every training process, now and those that come later, to stop
  // gracefully (MemoryRisk::Kind::kAlertStop): the alert rule `alert` with
  // `stop = true` fired. Sent once; a later request changes nothing.
  void RequestStop(std::string_view alert);
  // The alert whose request to stop was sent; empty while none was.
  std::string stop_requested_by() const;
  // Asks every training process that offers its stacks for them (`reason`:
  // "stalled"); their `stacks` events come at a later Read. On the sampler
  // thread only.
  bool RequestStacks(std::string_view reason) { return stacks_.Request(reason, ""); }
  // Asks every training process to profile `steps` steps for `finding`, once
  // a run and within `budget` of the run's time (profile_requests.h). On the
  // sampler thread only.
  bool RequestProfile(std::string_view finding, int64_t steps, double budget);

 private:
  // What one training process has said so far.
  struct Process {
    int rank = -1;
    std::string framework;
    std::optional<int64_t> epoch;
    OpenPhases phases;
    std::vector<std::pair<std::string, double>> scalars;        // the latest of each
    std::vector<std::pair<std::string, double>> epoch_scalars;  // since its epoch began
    std::vector<AllocatorFigures> allocator;
    bool closed = false;
    uint64_t order = 0;  // when it first spoke
  };
  struct SlotState {
    uint32_t pid = 0;
    uint64_t steps = 0;
    double mono_s = 0;
    DataWaitMeter wait;
  };
  // Reads the waiting messages into `t.events`, in send order, and applies
  // them; then ends the processes whose connection hung up, at unix time `now`.
  void Drain(double now, TrainingSample* t);
  // A connection hung up: its process is gone, with or without a goodbye.
  void HangUp(uint64_t client, double now, TrainingSample* t);
  // False when the marker was refused (too many processes).
  bool Apply(const Marker& m);
  // Room for one more process record: forgets the earliest that said goodbye.
  bool MakeRoom();
  // The process `pid` at `slot` is gone: keeps its count and frees the slot.
  void Retire(int slot, int pid);
  static bool Precedes(const Process& a, const Process& b);
  const Process* Reference() const;
  // The phase the training is in (TrainingSample::phase).
  std::string_view CurrentPhase() const;
  void ReadSlots(double mono_s, TrainingSample* out);
  void AddAllocatorFigures(Sample* out) const;
  // Signals the latest risk to the claimed slots that do not hold its number.
  void SignalRisk();
  // Writes `risk` as the next record and signals it to every claimed slot (risk_mu_ held).
  void PublishLocked(const MemoryRisk& risk);
  // Says `message` once per kind (on the next Read).
  void Warn(const char* kind, std::string message);

  MarkerEndpoint* endpoint_;
  std::map<std::pair<int, int>, Process> processes_;  // by (pid, slot): one per client
  std::vector<SlotState> slots_;
  std::vector<Marker> pending_;  // read this tick, before sorting
  // (pid, slot) each open connection speaks for, from its first marker.
  std::map<uint64_t, std::pair<int, int>> connections_;
  std::vector<uint64_t> hung_up_;
  uint64_t malformed_ = 0;
  uint64_t next_order_ = 0;
  // The counts of processes whose slots were freed.
  std::optional<double> retired_steps_;
  std::optional<double> retired_step_;
  std::vector<std::string> warned_;  // kinds said
  std::vector<Notice> warnings_;     // to say on the next Read
  std::string datagram_;
  mutable std::mutex risk_mu_;
  uint32_t risk_seq_ = 0;   // the latest risk's number; 0: none yet (risk_mu_)
  std::string stop_alert_;  // the alert that asked to stop; empty: none yet (risk_mu_)
  StackCapture stacks_;
  ProfileRequests profiles_;
  TraceReads traces_;        // the traces of `profile` events, read off this thread
  double first_mono_s_ = 0;  // the first tick's
  double last_mono_s_ = 0;
  std::optional<double> steps_per_second_;  // the latest tick's
};

}  // namespace tv

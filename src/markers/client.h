// MarkerClient: the training process's end of the marker protocol (protocol.h).
// Step(), WaitBegin() and WaitEnd() are the hot path, called on the training
// thread every step: a few relaxed stores into this process's shared-memory
// slot and a vDSO clock read, no syscall, no allocation. Send() is for rare
// events: one non-blocking datagram; when the socket is full or gone the
// marker is dropped and counted. Nothing here throws or blocks: a client that
// could not connect does nothing.
//
// Thread safety: one client per process, used from one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/training_sample.h"
#include "markers/protocol.h"

namespace tv {

class MarkerClient {
 public:
  // Connects to the socket at `socket_path` and claims a step slot. `rank` -1
  // takes RANK (or PADDLE_TRAINER_ID) from the environment when set.
  MarkerClient(const std::string& socket_path, int rank, std::string framework);
  ~MarkerClient();
  MarkerClient(const MarkerClient&) = delete;
  MarkerClient& operator=(const MarkerClient&) = delete;

  bool ok() const { return fd_ >= 0; }
  // Why the client is not connected, or why it went quiet; empty when well.
  const std::string& error() const { return error_; }
  int rank() const { return rank_; }
  int slot() const { return slot_index_; }

  // Counts one step (and records `step` when >= 0). Returns flags:
  // kStepAllocatorDue when the framework's allocator figures are due (at most
  // once per sampler interval), kStepRiskChanged while a memory risk came that
  // TakeRisk() has not read (one relaxed load of the slot's back-channel word).
  uint32_t Step(int64_t step) {
    if (slot_ == nullptr) return 0;
    ++steps_;
    slot_->steps.store(steps_, std::memory_order_relaxed);
    slot_->step.store(step, std::memory_order_relaxed);
    uint64_t now = NowNs();
    slot_->mono_ns.store(now, std::memory_order_release);
    uint32_t flags =
        (slot_->risk_seq.load(std::memory_order_relaxed) != risk_seen_ ? kStepRiskChanged : 0) |
        (slot_->request_seq.load(std::memory_order_relaxed) != request_seen_ ? kStepRequest : 0);
    if (now < next_allocator_ns_) return flags;
    next_allocator_ns_ = now + interval_ns_;
    return flags | kStepAllocatorDue;
  }
  uint64_t steps() const { return steps_; }

  // Whether a memory risk came that TakeRisk() has not read.
  bool risk_changed() const {
    return slot_ != nullptr && slot_->risk_seq.load(std::memory_order_relaxed) != risk_seen_;
  }
  // The latest memory risk the sampler sent, once: std::nullopt when none came
  // since the last call (or none could be read whole; then it is tried again).
  std::optional<MemoryRisk> TakeRisk();
  // The latest request the sampler sent this process (docs/markers.md
  // "Profiles"), once, as the request file's JSON text; empty when none came
  // since the last call or it could not be read.
  std::string TakeRequest();
  // This process profiled `steps` steps for `reason` into `dir` (under the
  // run directory), in `seconds`; `id`: the request's, when one asked.
  bool Profiled(std::string reason, std::string id, std::string dir, int64_t steps, double seconds);
  // The mean time between this process's epoch begins; absent before two.
  std::optional<double> seconds_per_epoch() const;

  // The process begins waiting for its next batch (before the loader's next()).
  // The first call also marks the slot as measuring data wait, so the sampler
  // can tell "no wait" from "not measured".
  void WaitBegin() {
    if (slot_ == nullptr) return;
    uint64_t now = NowNs();
    EnterTimedLoop(now);
    wait_start_ns_ = now;
    slot_->wait_start_ns.store(wait_start_ns_, std::memory_order_relaxed);
  }
  // A wait the caller measured itself, over by now (Keras: the batch comes
  // from a producer thread, docs/markers.md "Data wait"): adds `ns` to the
  // slot's total, and marks the slot as timing its wait and in its timed loop
  // (WaitAdd(0) only marks it).
  void WaitAdd(uint64_t ns) {
    if (slot_ == nullptr) return;
    EnterTimedLoop(NowNs());
    wait_ns_ += ns;
    slot_->wait_ns.store(wait_ns_, std::memory_order_release);
  }
  // The batch came: adds the time since WaitBegin() to the slot's total. Does
  // nothing when no wait is pending (none began, or a boundary dropped it).
  void WaitEnd() {
    if (slot_ == nullptr || wait_start_ns_ == 0) return;
    uint64_t now = NowNs();
    if (now > wait_start_ns_) wait_ns_ += now - wait_start_ns_;
    wait_start_ns_ = 0;
    slot_->wait_start_ns.store(0, std::memory_order_relaxed);
    slot_->wait_ns.store(wait_ns_, std::memory_order_release);
  }
  // The process leaves its timed loop (the loader ran out, or an epoch or
  // phase boundary): a pending wait is dropped uncredited, and the time until
  // the next WaitBegin() is neither wait nor work of the loop.
  void WaitPause() {
    if (slot_ == nullptr) return;
    if (wait_start_ns_ != 0) {
      wait_start_ns_ = 0;
      slot_->wait_start_ns.store(0, std::memory_order_relaxed);
    }
    if (timed_) {
      timed_ = false;
      uint64_t now = NowNs();
      if (now > timed_since_ns_) timed_ns_ += now - timed_since_ns_;
      slot_->wait_flags.store(kWaitMeasured, std::memory_order_relaxed);
    }
  }
  uint64_t wait_ns() const { return wait_ns_; }

  // The rare events. Each sends one datagram; false when it was dropped. Epoch
  // and phase boundaries also WaitPause(): time between epochs or in another
  // phase is no data wait of the training loop.
  // `call`: the script's framework call the epoch belongs to (1, 2, ...); 0: not said.
  // `planned_epochs`: how many epochs the call plans, from its first; 0: not said.
  // EpochBegin also says the steps counted so far (bye's count, less it, is an
  // epoch's that the process never ends).
  bool EpochBegin(int64_t epoch, int64_t call = 0, int64_t planned_epochs = 0);
  // EpochEnd says the steps counted since EpochBegin and, when the process
  // timed its wait in the epoch, that wait and the time in its timed loop.
  bool EpochEnd(int64_t epoch);
  bool PhaseBegin(std::string phase);
  bool PhaseEnd(std::string phase);
  bool Scalars(std::vector<std::pair<std::string, double>> values);
  bool Allocator(std::vector<AllocatorFigures> devices);
  // This process writes TensorBoard logs to `log_dir` (absolute): the
  // supervisor adds its system scalars there.
  bool TensorboardLogDir(std::string log_dir);

  // Stacks (docs/markers.md "Stacks"): the file this process writes its
  // stacks to; the first real-time signal from kStacksSignalMin + 6 that has
  // no handler (0: none); and the offer, once the caller's handler for
  // `signal` is installed (Python's faulthandler): makes it restart the
  // system calls it interrupts (SA_RESTART) and sends the `stacks` marker.
  std::string stacks_path() const { return StacksPathFor(socket_path_, pid_); }
  static int FreeStacksSignal();
  bool OfferStacks(int signal);

  // Fills in pid, rank, slot and time, and sends `m`; false when it was dropped.
  bool Send(Marker m);
  uint64_t sent() const { return sent_; }
  uint64_t dropped() const { return dropped_; }

  // Sends "bye" (with the step count and, when the process is dying of one, the
  // exception's type and message) and disconnects. Idempotent; the destructor calls it.
  void Close(std::string exception = {}, std::string message = {});

 private:
  std::string socket_path_;
  static uint64_t NowNs();
  void EnterTimedLoop(uint64_t now) {
    if (timed_) return;
    timed_ = true;
    timed_since_ns_ = now;
    slot_->wait_flags.store(kWaitMeasured | kWaitTimed, std::memory_order_relaxed);
  }
  void ClaimSlot(const std::string& steps_path);

  int fd_ = -1;
  int pid_ = 0;
  int rank_ = -1;
  std::string framework_;
  std::string error_;
  void* map_ = nullptr;
  StepSlot* slot_ = nullptr;
  int slot_index_ = -1;
  uint64_t steps_ = 0;
  uint64_t epoch_begin_steps_ = 0;
  uint64_t wait_ns_ = 0;         // what the slot's wait_ns holds
  uint64_t wait_start_ns_ = 0;   // what the slot's wait_start_ns holds
  bool timed_ = false;           // kWaitTimed is set in the slot
  uint64_t timed_since_ns_ = 0;  // when timed_ was last set
  uint64_t timed_ns_ = 0;        // time in the timed loop, over the spans that ended
  uint64_t epoch_wait_ns_ = 0;   // wait_ns_ at the epoch's begin
  uint64_t epoch_timed_ns_ = 0;  // timed_ns_ at the epoch's begin
  uint64_t interval_ns_ = 1'000'000'000;
  uint64_t next_allocator_ns_ = 0;
  uint32_t risk_seen_ = 0;     // the risk number TakeRisk() last read
  uint32_t request_seen_ = 0;  // the request number TakeRequest() last read
  uint64_t first_epoch_ns_ = 0;
  uint64_t last_epoch_ns_ = 0;
  uint64_t epochs_begun_ = 0;
  uint64_t sent_ = 0;
  uint64_t dropped_ = 0;
};

// The rank the environment gives this process (RANK, else PADDLE_TRAINER_ID), or -1.
int RankFromEnvironment();

// Sends `m` alone on a connection of its own to the socket at `socket_path`
// (`trainvitals stacks`'s request: no step slot, no hello); false with
// `error` set when it could not.
bool SendMarker(const std::string& socket_path, const Marker& m, std::string* error);

}  // namespace tv

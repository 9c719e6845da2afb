// The marker protocol between a training process and the sampler (docs/markers.md).
//
// Two channels, both in a private directory (mode 0700) the sampler creates:
// - `steps`: a small shared-memory file of fixed slots. A training process
//   claims one slot and stores its step counter there on every step: no
//   syscall, a few relaxed atomic stores. The sampler reads all slots each tick.
// - `markers.sock`: a Unix SOCK_SEQPACKET socket for rare events (epoch and
//   phase boundaries, user scalars, allocator figures): each process connects
//   once and sends one JSON object per message ("datagram" below).
//   Malformed datagrams are counted and dropped, never fatal.
// TRAINVITALS_SOCKET names the socket; the steps file sits beside it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tv {

inline constexpr int kMarkerProtocolVersion = 1;
inline constexpr char kMarkerSocketEnv[] = "TRAINVITALS_SOCKET";
// The run directory of the run a training process reports to: the supervisor
// sets it for its command, the in-process monitor for the processes it starts.
inline constexpr char kRunDirEnv[] = "TRAINVITALS_RUN_DIR";
inline constexpr char kMarkerSocketName[] = "markers.sock";
inline constexpr char kStepsFileName[] = "steps";
inline constexpr uint32_t kStepSlots = 256;
inline constexpr size_t kMaxDatagram = 65536;

// StepSlot::wait_flags bits. A client before data-wait timing leaves them 0:
// its data wait is not measured (absent), not zero.
inline constexpr uint32_t kWaitMeasured = 1;  // the process has timed a data wait
inline constexpr uint32_t kWaitTimed = 2;     // ... and is in its timed loop now

// MarkerClient::Step's flags.
inline constexpr uint32_t kStepAllocatorDue = 1;  // the allocator figures are due
inline constexpr uint32_t kStepRiskChanged = 2;  // a memory risk came that the process has not read
inline constexpr uint32_t kStepRequest = 4;      // a request came (a profile) that it has not read
// The request beside the socket (docs/markers.md "Profiles"): the latest one,
// JSON, replaced whole (renamed into place) before its number is stored.
inline constexpr char kRequestFileName[] = "request";

// One process's step counter and data-wait time, and the back-channel word the
// sampler writes into it. 64 bytes: one cache line per writer. Bytes 60..63
// are reserved (zero).
struct alignas(64) StepSlot {
  std::atomic<uint32_t> pid;      // 0: free; claimed by compare-exchange from 0
  std::atomic<int32_t> rank;      // -1: not distributed
  std::atomic<uint64_t> steps;    // step() calls so far
  std::atomic<int64_t> step;      // the last step number given; -1 when none was
  std::atomic<uint64_t> mono_ns;  // CLOCK_MONOTONIC of the last step
  // Nanoseconds spent waiting for the next batch, over the waits that ended.
  // Stored (release) after wait_start_ns is cleared, so a reader that sees the
  // new total also sees the wait ended.
  std::atomic<uint64_t> wait_ns;
  std::atomic<uint64_t> wait_start_ns;  // CLOCK_MONOTONIC a wait in progress began; 0: none
  std::atomic<uint32_t> wait_flags;     // kWaitMeasured | kWaitTimed
  // Written by the sampler only: the number of the latest memory risk
  // (StepsHeader::risk.seq), 0 while there is none. Stored into every claimed
  // slot when a risk opens and into a slot claimed later; zeroed when freed.
  std::atomic<uint32_t> risk_seq;
  // Written by the sampler only: the number of the latest request to this
  // process (the file kRequestFileName holds it), 0 while there is none.
  std::atomic<uint32_t> request_seq;
};
static_assert(sizeof(StepSlot) == 64);
static_assert(offsetof(StepSlot, wait_ns) == 32 && offsetof(StepSlot, wait_start_ns) == 40 &&
              offsetof(StepSlot, wait_flags) == 48 && offsetof(StepSlot, risk_seq) == 52 &&
              offsetof(StepSlot, request_seq) == 56);
static_assert(std::atomic<uint64_t>::is_always_lock_free);

// The latest memory risk (MemoryRisk), once for all processes, in the steps
// file's header. Written by the sampler only, under a sequence lock: `lock` is
// odd while the fields change, so a reader that saw the same even `lock`
// before and after reading them read one whole record.
struct RiskRecord {
  std::atomic<uint32_t> lock;
  std::atomic<uint32_t> seq;  // this risk's number: 1, 2, ...; 0: none yet
  // MemoryRisk::Kind: 1 oom-forecast, 2 gpu-memory-leak, 3 host-memory-leak,
  // 4 alert-stop (an alert asks the training to stop; the fields below unused).
  std::atomic<uint16_t> kind;
  std::atomic<int16_t> gpu;          // the GPU's index; -1: host memory
  std::atomic<int32_t> epoch;        // the epoch the memory runs out in; -1: not known
  std::atomic<double> seconds_left;  // NaN: not known
  std::atomic<double> growth_bytes_per_second;
  std::atomic<int32_t> planned_epochs;  // -1: not known
  uint32_t reserved;
};
static_assert(sizeof(RiskRecord) == 40 && offsetof(RiskRecord, seconds_left) == 16 &&
              offsetof(RiskRecord, planned_epochs) == 32);
static_assert(std::atomic<double>::is_always_lock_free);

struct alignas(64) StepsHeader {
  char magic[8];  // "TVSTEPS1"
  uint32_t version;
  uint32_t slots;
  uint32_t slot_size;
  uint32_t
      interval_ms;  // the sampler's row interval: allocator figures are read at most this often
  RiskRecord risk;  // zero in files of supervisors before it: no risk, ever
};
static_assert(sizeof(StepsHeader) == 64 && offsetof(StepsHeader, risk) == 24);

inline constexpr size_t kStepsFileSize = sizeof(StepsHeader) + kStepSlots * sizeof(StepSlot);

inline StepSlot* SlotsOf(void* mapped) {
  return reinterpret_cast<StepSlot*>(static_cast<char*>(mapped) + sizeof(StepsHeader));
}

// The steps file beside a marker socket path.
std::string StepsPathFor(std::string_view socket_path);
// The request file beside a marker socket path.
std::string RequestPathFor(std::string_view socket_path);
// The file beside a marker socket path where process `pid` writes its stacks.
std::string StacksPathFor(std::string_view socket_path, int pid);
// Removes the stacks files from a marker directory.
void RemoveStacksFiles(const std::string& dir);

enum class MarkerType {
  kHello,
  kEpochBegin,
  kEpochEnd,
  kPhaseBegin,
  kPhaseEnd,
  kScalars,
  kAllocator,
  kBye,
  kTensorboardLogDir,  // "tensorboard_log_dir": the process writes TensorBoard logs to log_dir
  // "stacks": the process writes its threads' Python stacks to the file
  // stacks-<pid> beside the socket when it receives `signal` (a real-time one).
  kStacks,
  // "request": `trainvitals stacks` asks the listener for every training
  // process's stacks now (`what` "stacks"), naming its request `id`.
  kRequest,
  // "profile": the process profiled `steps` steps for `reason` (a finding's id,
  // or "request") into `dir` under the run directory, taking `seconds`.
  kProfile
};

std::string_view MarkerTypeName(MarkerType type);

// A framework allocator's figures for one device, as the framework numbers it.
struct AllocatorFigures {
  int device = 0;
  // The device's UUID as the framework's CUDA reports it ("GPU-..."); empty when
  // unknown. With a per-rank CUDA_VISIBLE_DEVICES every rank calls its GPU
  // device 0: the UUID says which GPU that is.
  std::string uuid;
  std::optional<double> allocated_bytes;
  std::optional<double> peak_allocated_bytes;
  std::optional<double> reserved_bytes;
  std::optional<double> peak_reserved_bytes;
  std::optional<double> active_bytes;
  std::optional<double> num_ooms;
  std::optional<double> alloc_retries;
};

// The figures by their wire names ("allocated_bytes", ...), in wire order.
struct AllocatorField {
  std::string_view name;
  std::optional<double> AllocatorFigures::*value;
};
std::span<const AllocatorField> AllocatorFields();

struct Marker {
  MarkerType type = MarkerType::kHello;
  int pid = 0;
  int rank = -1;
  int slot = -1;
  double t = 0;                  // the sender's unix seconds
  std::optional<int64_t> epoch;  // epoch markers
  std::optional<int64_t> call;   // epoch_begin: the script's framework call (1, 2, ...)
  // epoch_begin ("epochs"): how many epochs the call plans, from its first.
  std::optional<int64_t> planned_epochs;
  std::optional<int64_t> steps;  // epoch_begin: so far; epoch_end: in the epoch; bye: all
  // epoch_end, from the process's own counters over the epoch: the time it
  // spent in its timed loop ("timed_s") and, of that, waiting for its next
  // batch ("wait_s"). Both or neither: only a process that timed its wait.
  std::optional<double> wait_s;
  std::optional<double> timed_s;
  std::string phase;      // phase markers: "train", "eval", "predict"
  std::string framework;  // hello
  // bye: the exception the process is dying of (its type, e.g. "ValueError",
  // and the first line of its message); empty when it ends normally.
  std::string exception;
  std::string message;
  std::vector<std::pair<std::string, double>> scalars;
  std::vector<AllocatorFigures> allocator;
  std::string log_dir;  // tensorboard_log_dir: an absolute path
  int signal = 0;       // stacks: the real-time signal that asks for them
  std::string what;     // request: "stacks", "profile"
  std::string id;       // request, profile: the asker's name for it (letters, digits, -_.)
  int target = -1;      // request "profile": the rank asked; -1: every process
  std::string reason;   // profile: the finding's id, or "request"
  std::string dir;      // profile: relative to the run directory
  std::optional<double> seconds;  // profile: how long it took
};

// The real-time signals a process may offer for its stacks (SIGRTMIN as the C
// library leaves it to programs, to SIGRTMAX on Linux).
inline constexpr int kStacksSignalMin = 34;
inline constexpr int kStacksSignalMax = 64;

// Encodes `m` as one datagram (compact JSON, "v" first).
std::string EncodeMarker(const Marker& m);
// Parses one datagram; std::nullopt with `error` set when it is not a valid
// marker of a version this build understands.
std::optional<Marker> ParseMarker(std::string_view datagram, std::string* error);

}  // namespace tv

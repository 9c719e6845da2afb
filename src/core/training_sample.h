// The training part of a Sample: what the training processes said (steps,
// epochs, phases, scalars), as plain data. The marker source fills it from the
// marker protocol (src/markers/); nothing here knows that wire format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/event_type.h"

namespace tv {

// Where a training process waits, from the Python stacks it wrote when asked
// (a `stacks` event; docs/markers.md "Stacks").
struct StackWait {
  std::string reason;   // why they were asked for: "stalled", "request"
  std::string request;  // the asker's name for a request (`trainvitals stacks`)
  std::string file;     // the stacks, relative to the run directory; empty: no answer
  // What its main thread waits in: "collective", "data-loader", "lock", "io",
  // "sleep", "running" (in Python code or a native call); "no-answer" when it
  // wrote nothing in time, with `state` saying what it was ("stopped", "gone").
  std::string waits_in;
  std::string state;
  std::string
      frame;  // the frame that names it: "all_reduce (torch/distributed/distributed_c10d.py:2501)"
  std::string at;    // the script's frame leading there: "/job/train.py:12 in main"
  std::string code;  // that line of the script, trimmed; empty when it could not be read
  int threads = 0;   // Python threads in the stacks
};

// What a profiler trace a training process took shows (docs/markers.md
// "Profiles"), each share of the traced steps' time; absent when the trace
// does not tell (no GPU, no step ranges).
struct TraceFigures {
  int steps = 0;                                            // step ranges in the trace
  std::optional<double> step_s;                             // their mean length
  std::optional<double> data_loader_share;                  // in the data loader's next()
  std::optional<double> h2d_share;                          // host-to-device copies on the GPU
  std::optional<double> gpu_idle_share;                     // no kernel or copy on the GPU
  std::vector<std::pair<std::string, double>> top_ops;      // the five longest operators
  std::vector<std::pair<std::string, double>> top_kernels;  // the five longest GPU kernels
};

// A profile a training process took (a `profile` event).
struct ProfileCapture {
  std::string reason;   // the finding's id, or "request"
  std::string request;  // the asker's name for a request (`trainvitals profile`)
  std::string dir;      // relative to the run directory
  int64_t steps = 0;
  std::optional<double> seconds;
  std::string trace_error;  // why the trace could not be read; empty when it was
  TraceFigures figures;
};

// One thing a training process said, at the sender's unix time `t`: one of
// the events.jsonl types a training process speaks for (client_start,
// client_end, epoch_begin, epoch_end, phase_begin, phase_end,
// tensorboard_log_dir). Its user scalars are no event of their own: the
// latest are in rows (TrainingSample::scalars), and an epoch's are in its end.
struct TrainingEvent {
  EventType type = EventType::kClientStart;
  int pid = 0;
  int rank = -1;  // -1: not distributed
  double t = 0;
  std::optional<int64_t> epoch;  // epoch events
  std::optional<int64_t> steps;  // epoch_end: steps in the epoch; client end: all steps
  // epoch_end: the process's time in its timed loop over the epoch and, of
  // it, its wait for batches, from its own counters; absent when it did not
  // time its wait.
  std::optional<double> wait_s;
  std::optional<double> timed_s;
  std::optional<int64_t>
      call;  // epoch_begin: the framework call (fit, ...) it belongs to, 1, 2, ...
  // epoch_begin: how many epochs the call plans (Keras params["epochs"],
  // Lightning max_epochs, Paddle epochs, monitor(total_epochs=)); absent when unknown.
  std::optional<int64_t> planned_epochs;
  std::string phase;      // phase events: "train", "eval", "predict"
  std::string framework;  // client start
  // epoch_end: the process's latest user scalars since its epoch began (the
  // epoch's logs: the loss, ...), in the order first said.
  std::vector<std::pair<std::string, double>> scalars;
  // Client end: the exception the process is dying of (its type, e.g.
  // "ValueError", and the first line of its message); empty when it ends normally.
  std::string exception;
  std::string message;
  std::string log_dir;                    // kTensorboardLogDir: an absolute path
  std::optional<StackWait> stacks;        // kStacks: its stacks, as read when asked
  std::optional<ProfileCapture> profile;  // kProfile: the profile it took
};

// One training process's step counter, as read this tick.
struct RankSteps {
  int rank = -1;  // -1: not distributed
  int pid = 0;
  double steps = 0;
  std::optional<double> step;
  // The share of time it waited for its next batch (0..1); absent when it
  // does not measure data wait or is outside its timed loop.
  std::optional<double> data_wait_ratio;
  // Its memory: its share of job.memory_bytes (PSS based), from the process
  // tree; absent when it is not a member the tree read.
  std::optional<double> memory_bytes;
  std::optional<double> memory_anon_pss_bytes;  // ... and of job.memory_anon_pss_bytes
};

// The training's phase changed: at the sender's time `t`, time began to go to
// `phase` (empty: none). `began`: a phase_begin made it current (not the end
// of a nested phase returning to it).
struct PhaseChange {
  double t = 0;
  std::string phase;
  bool began = false;
};

// What the training processes said through markers. Empty without markers.
struct TrainingSample {
  std::optional<double> steps;  // the most steps any process has taken
  std::optional<double> step;   // the highest step number given
  std::optional<double> steps_per_second;
  // The mean over the processes that time their data wait of the share of
  // this tick each spent waiting for its next batch; absent when none does.
  std::optional<double> data_wait_ratio;
  std::optional<double> epoch;              // the current (or last) epoch of the lowest rank
  std::optional<double> markers_malformed;  // datagrams ignored since the start
  // The innermost open phase of the lowest rank that has one (a plain process
  // counts as rank 0, the first to connect wins ties); empty: none.
  std::string phase;
  std::vector<PhaseChange> phase_changes;               // since the previous tick, in order
  std::vector<std::pair<std::string, double>> scalars;  // the lowest rank's latest user scalars
  std::vector<RankSteps> ranks;                         // every process with a step slot
  std::vector<TrainingEvent> events;                    // said since the previous tick, in order
  std::string malformed_error;  // the first malformed datagram's fault, said once

  // Empties it for the next tick, keeping the capacity of the vectors and
  // strings: a steady tick allocates nothing.
  void Clear() {
    steps.reset();
    step.reset();
    steps_per_second.reset();
    data_wait_ratio.reset();
    epoch.reset();
    markers_malformed.reset();
    phase.clear();
    phase_changes.clear();
    scalars.clear();
    ranks.clear();
    events.clear();
    malformed_error.clear();
  }
};

// What the analysis tells the training processes about their memory, through
// the back-channel word of their step slots (docs/markers.md): a leak found,
// or an OOM forecast inside the planned run. kAlertStop is no memory risk but
// travels the same way: an alert rule with `stop = true` fired and asks the
// training to stop gracefully (its other fields unused).
struct MemoryRisk {
  enum class Kind { kOomForecast = 1, kGpuMemoryLeak = 2, kHostMemoryLeak = 3, kAlertStop = 4 };
  Kind kind = Kind::kOomForecast;
  int gpu = -1;                        // the GPU's index (as the job numbers it); -1: host memory
  std::optional<double> seconds_left;  // until the memory runs out at this rate
  std::optional<int64_t> epoch;        // the epoch it runs out in (when epochs are known)
  std::optional<int64_t> planned_epochs;
  double growth_bytes_per_second = 0;
};

}  // namespace tv

// Analyzer: judges a run from its rows and what the training processes said,
// and keeps the findings (../DESIGN.md, "Findings"). One code path, live and
// offline: live, FindingsObserver feeds it on the sampler thread; `trainvitals
// analyze` feeds it the run directory's files (replay.h). It sees rows as
// samples.jsonl holds them (Frame) and marks as events.jsonl holds them (Mark),
// a mark before the first row whose time is at least kMarkHold_s after it, so
// both ways reach the same findings.
//
// Thread safety: none; one thread feeds it and reads it.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/findings/frame.h"
#include "analysis/findings/goodput.h"
#include "analysis/findings/oom.h"
#include "analysis/findings/table.h"
#include "analysis/findings/trend.h"
#include "analysis/findings/window.h"
#include "core/event.h"
#include "core/row.h"

namespace tv {

// A mark is fed before the first row that ends at least this long after it:
// marks reach the sampler up to a tick late, so live and replayed runs see
// them at the same row.
inline constexpr double kMarkHold_s = 0.5;

// What a training process said, as events.jsonl holds it.
struct Mark {
  enum class Type { kClientStart, kClientEnd, kEpochBegin, kEpochEnd, kPhaseBegin, kPhaseEnd };
  Type type = Type::kClientStart;
  double t = 0;
  int pid = 0;
  int rank = -1;
  std::optional<int64_t> epoch;
  std::string phase;
  std::string framework;
  std::optional<int64_t> planned_epochs;  // epoch_begin: the call's planned epochs
  std::optional<int64_t> call;            // epoch_begin: the framework call (1, 2, ...)
  std::string exception;  // client_end: what the process died of ("OutOfMemoryError")
  std::string message;
};
// The mark an events.jsonl event is; false for other event types.
bool MarkFromEvent(const nlohmann::json& event, Mark* mark);

// Whom a memory finding is about; its subject and words are made only when
// one opens (a row makes no strings).
struct MemoryWho {
  enum class Kind { kJob, kRank, kHost, kGpuJob, kGpuAllocated, kGpu };
  Kind kind = Kind::kJob;
  int index = -1;  // the GPU, or the rank
  int pid = 0;
};

class Analyzer {
 public:
  explicit Analyzer(Thresholds thresholds = Thresholds(), double interval_s = 1);

  // Takes in what a training process said; eval-heavy is judged at an epoch's end.
  void OnMark(const Mark& mark, std::vector<Event>* events);
  // Judges one row; appends finding_open / finding_close events.
  void OnFrame(const Frame& frame, std::vector<Event>* events);
  // How the job ended (oom.h), before Finish.
  void OnJobEnd(const JobEnd& end) { job_end_ = end; }
  // The run ended at `t`: whole-run verdicts. Open findings stay open (no
  // closed_t: they lasted to the end).
  void Finish(double t, std::vector<Event>* events);

  // Every finding, the worst first (severity, then share of the run), each in
  // the shape of ../DESIGN.md "Findings".
  nlohmann::ordered_json Findings() const;
  // {"score": 0..100, "breakdown": [{"what", "points"}], "goodput": {...},
  // "not_judged": [{"id", "needs"}], "epochs": [{"epoch", "score", "goodput"}]}
  // (docs/findings.md "Health score").
  nlohmann::ordered_json Health() const;
  // The score so far (for Prometheus); nullopt before anything was judged.
  std::optional<double> HealthScore() const;
  // Where the time went so far (goodput.h); ratios of it for the row.
  const TimeLedger& TimeSpent() const { return ledger_; }
  // Whether the run's step markers measure its productive time.
  bool StepsMeasured() const { return markers_ && first_step_t_.has_value(); }
  // The rules that apply to this run but have not had the evidence to judge
  // yet (too few steps, too short a run), in table order.
  void NotJudged(std::vector<std::string_view>* out) const;
  // Each finding id opened so far, in the order first opened: whether one is
  // open now and its worst severity (for Prometheus).
  void FindingStates(std::vector<Row::Finding>* out) const;
  // The memory risks opened since the last call (leaks, OOM forecasts), for
  // the training processes.
  std::vector<MemoryRisk> TakeRisks() { return std::exchange(risks_, {}); }
  // Each memory figure's trend: its floors, growth per hour (and per epoch)
  // with a confidence, and whether it is a leak or not enough evidence yet.
  nlohmann::ordered_json MemoryTrends() const;

 private:
  struct Record {
    FindingId id;
    Severity severity;
    double opened_t;
    std::optional<double> closed_t;
    nlohmann::ordered_json subject;
    nlohmann::ordered_json evidence;
    std::string message;
    std::string advice;
  };
  struct Opening {
    Severity severity = Severity::kWarning;
    nlohmann::ordered_json evidence;
    std::string message;
    std::string advice;  // empty: the table's advice for the framework
  };
  struct GpuState {
    WindowMean busy, busy_long, memory_long, throttle;
    std::optional<double> held_since;  // the job holds memory on it since
    bool ever_busy = false;
    std::optional<double> idle_since;
    // The last judged row the job held it: for gpu-unused over a whole run
    // shorter than gpu_unused_s, judged at the end.
    struct Held {
      double job_memory_bytes, busy_ratio, seconds;
    };
    std::optional<Held> held_judged;
    Tracker idle, unused, low, imbalance, throttled, full, shared, small;
  };
  struct RankState {
    std::optional<double> steps;
    std::deque<std::pair<double, double>> history;  // (t, steps) over the window
    WindowMean wait;                                // its data-wait share
    Tracker straggler;
  };
  struct StepState {  // a process's (or the job's) progress, for `stalled`
    std::optional<double> steps;
    double last_step_t = 0;
    std::vector<double> step_times_s;  // recent step-time estimates, a ring
    size_t next = 0;
    Tracker stalled;
  };
  struct EpochState {
    double begin_t = 0;
    double end_t = 0;
    double eval_s = 0;
    std::optional<double> eval_since;
    double busy_sum = 0;
    int busy_rows = 0;
    TimeLedger ledger;
  };
  // A training row whose steps had not advanced yet: part of a long step, or
  // of a stall once one is established.
  struct PendingRow {
    double t = 0;
    double seconds = 0;  // its computing part (its data wait is booked at once)
  };

  // Feeds `cond` at `t` into `tracker`, closing it once clear for hold_s;
  // true when the finding should open now (it held for `open_after_s`): the
  // caller then builds the evidence and calls Open.
  bool Due(Tracker& tracker, double t, bool cond, double open_after_s, std::vector<Event>* events);
  void Open(FindingId id, Tracker& tracker, double t, const nlohmann::ordered_json& subject,
            Opening opening, std::vector<Event>* events);
  void Close(Tracker& tracker, double t, std::vector<Event>* events);

  bool Training(const Frame& f) const;
  bool Judged(const Frame& f) const;
  // With step markers: enough steps and training seconds since the first
  // step for the step-based rules (judge_min_steps, judge_min_s).
  bool StepEvidence(const Frame& f) const;
  // The rule applies to this run / has had the evidence to judge it.
  void Want(FindingId id) { judge_[static_cast<size_t>(id)] |= 1; }
  void Judging(FindingId id) { judge_[static_cast<size_t>(id)] |= 3; }
  // Where the row's time went (goodput.cc).
  void Account(const Frame& f, double row_s);
  void Book(Spent where, double t, double seconds);
  void FlushPending(Spent where);
  bool StalledNow() const;
  bool HeldIdle(const Frame& f) const;
  // Rules, by what they read (rules_*.cc).
  void JudgeInput(const Frame& f, std::vector<Event>* events);
  void JudgeProgress(const Frame& f, std::vector<Event>* events);
  void JudgeStep(StepState& s, std::optional<double> steps, const nlohmann::ordered_json& subject,
                 const Frame& f, bool judge, std::vector<Event>* events);
  void JudgeRanks(const Frame& f, std::vector<Event>* events);
  void JudgeHost(const Frame& f, std::vector<Event>* events);
  void JudgeGpus(const Frame& f, std::vector<Event>* events);
  void JudgeGpuUse(GpuState& g, const GpuFrame& gpu, const Frame& f, std::vector<Event>* events);
  void FinishGpuUse(std::vector<Event>* events);
  void JudgeBalance(const Frame& f, std::vector<Event>* events);
  // Memory leaks and the OOM forecast (rules_memory.cc).
  struct MemorySeries {
    FloorSeries floors;
    FloorTrend trend;
    bool leak = false;  // as the newest floors say
    // The trend while it last was a leak: a leak that levelled off later
    // is still reported as one, with the rate it had.
    std::optional<FloorTrend> leak_trend;
    Tracker tracker;  // its leak finding (host-memory-leak, gpu-memory-leak)
  };
  struct GpuMemory {
    MemorySeries job, allocated, reserved;
    Tracker growth, forecast;
  };
  struct Forecast {
    double slope_per_s = 0;
    std::optional<double> slope_per_epoch;
    double room_bytes = 0;
    double limit_bytes = 0;
    double seconds_left = 0;
    std::optional<int64_t> epoch;  // of the call, 1-based, the memory runs out in
    std::optional<int64_t> planned_epochs;
    std::optional<double> run_left_s;  // until the planned last epoch ends
  };
  void JudgeMemory(const Frame& f, std::vector<Event>* events);
  std::optional<int64_t> FloorUnit(const Frame& f);
  bool FeedSeries(MemorySeries& s, std::optional<double> value, double t, int64_t unit);
  void JudgeLeak(MemorySeries& s, FindingId id, MemoryWho who, double t,
                 std::vector<Event>* events);
  void JudgeForecast(Tracker& tr, const MemorySeries* leaking, double room, double limit,
                     MemoryWho who, double t, std::vector<Event>* events);
  Forecast ForecastOf(const MemorySeries& s, double room, double limit, double t) const;
  nlohmann::ordered_json TrendJson(const MemorySeries& s) const;
  void EndEpoch(const Mark& m, std::vector<Event>* events);
  // oom (rules_oom.cc): an out-of-memory error a process died of, or the job's end.
  void JudgeOomMark(const Mark& m, std::vector<Event>* events);
  void JudgeOomEnd(std::vector<Event>* events);
  void OpenOom(double t, const nlohmann::ordered_json& subject, nlohmann::ordered_json cause,
               std::string message, std::vector<Event>* events);
  // Whether any row was judged or any finding opened: else no score.
  // With step markers the score stands from the first step (the time is measured).
  bool JudgedAny() const {
    return start_t_ && (!records_.empty() || judged_s_ > 0 || StepsMeasured());
  }
  // The mean GPU busy of the judged training rows; nullopt without GPUs.
  std::optional<double> BusyMean() const;
  double ScoreOf(double from_t, double to_t, std::optional<double> busy, const TimeLedger& spent,
                 nlohmann::ordered_json* breakdown) const;

  Thresholds th_;
  double interval_s_;
  Framework framework_ = Framework::kNone;
  bool markers_ = false;
  bool train_marked_ = false;  // the job has named its train phase
  std::optional<double> start_t_;
  std::optional<double> first_step_t_;
  std::optional<double> end_t_;
  double last_t_ = 0;
  std::map<int, int> clients_;  // live training processes: pid -> rank
  int lowest_rank_pid_ = 0;     // whose epochs and phases count
  std::string phase_;           // the lowest rank's open phase, from marks
  std::vector<Record> records_;
  std::map<int64_t, EpochState> epochs_;
  std::vector<std::pair<int64_t, EpochState>> done_epochs_;
  WindowMean data_wait_, cpu_bound_, io_bound_, cpu_long_;
  double wait_sum_ = 0;  // data-wait shares of the training rows since the first step's
  int wait_rows_ = 0;
  std::deque<std::pair<double, double>> swap_;  // (t, swap used) over the window
  Tracker input_, cpu_, io_, host_memory_, swapping_, eval_, slow_start_;
  std::map<int, GpuState> gpus_;
  std::map<int, RankState> ranks_;
  StepState job_steps_;
  std::map<int, StepState> rank_steps_;
  double busy_sum_ = 0;  // mean GPU busy of judged training rows, for the health score
  int busy_rows_ = 0;
  double judged_s_ = 0;
  TimeLedger ledger_;
  std::vector<PendingRow> pending_;
  std::optional<double> ledger_steps_;          // the job's steps at the previous row
  double ledger_t_ = 0;                         // the previous row's end
  std::optional<double> steps_at_first_;        // the job's steps at the first step's row
  std::array<uint8_t, kFindingCount> judge_{};  // bit 0: applies; bit 1: judged
  std::vector<MemoryRisk> risks_;
  MemorySeries host_memory_series_;
  Tracker host_forecast_;
  std::map<int, GpuMemory> gpu_memory_;
  std::map<int, MemorySeries> rank_memory_;  // by pid, with several training processes
  std::map<int, int> rank_of_pid_;
  bool floors_by_epoch_ = false;
  std::optional<int64_t> epoch_now_;  // the lowest rank's newest epoch begun
  int64_t epochs_begun_ = 0;
  // The lowest rank's current framework call: its planned epochs and when each
  // of its epochs began (for the epoch the memory runs out in).
  std::optional<int64_t> call_;
  std::optional<int64_t> planned_epochs_;
  std::vector<double> call_epoch_begins_;
  MemoryTrail memory_trail_;  // oom
  std::optional<JobEnd> job_end_;
  Tracker oom_;
};

}  // namespace tv

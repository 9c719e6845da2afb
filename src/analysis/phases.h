// PhaseTracker: per-epoch and per-phase figures from the markers and the full-
// rate samples. An epoch opens when the first rank begins it and closes when
// every rank that began it has ended it; its record holds duration, steps,
// steps/s, the job's CPU and memory, and per GPU load, memory, allocator peak,
// temperature and energy over exactly that span, and the loss and metrics the
// lowest rank logged (user scalars) between its begin and end of the epoch.
// An epoch the run ended inside (an exception, a kill) ends at its last step,
// not at the end of the process's teardown; its steps are the most any rank
// took in it by its own count (from its epoch_begin to its epoch_end or bye),
// else those the sampler saw between its begin and its last sample. Phases
// (train, eval, predict) follow the lowest rank: time goes to its innermost
// open phase, so evaluation inside a training epoch counts as evaluation; time
// inside an epoch outside any phase is training time. A phase's data-wait
// share is recorded only where it was measured: training, a phase whose steps
// advanced, or one whose own loop timed its wait. An epoch's data-wait share
// is the mean over its ranks of what each one's own counters say at its
// epoch_begin and epoch_end, where they said it; else the mean over its
// samples. A GPU's job SM share (NVML
// process utilization, read every few seconds) is held between its readings,
// so a span shorter than the reading period still has one.
//
// summary.json's part: "epochs" (Epochs) and "phases" (Phases).
//
// Thread safety: a SampleObserver, fed on the sampler thread; Epochs/Phases
// and AddTo after the sampler stopped.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/aggregator.h"
#include "core/sampler.h"
#include "store/epoch_record.h"
#include "store/summary_part.h"

namespace tv {

class PhaseTracker final : public SampleObserver, public SummaryPart {
 public:
  void OnSample(const Sample& sample, std::vector<Event>* events) override;
  void OnFinish(double t, std::vector<Event>* events) override;

  // One record per epoch, in the order they closed.
  const std::vector<EpochRecord>& Epochs() const { return epochs_; }
  // Time, share and resources per phase: train, eval, predict, then the others
  // by name.
  PhaseRecords Phases() const;
  void AddTo(RunSummary* summary) const override;

 private:
  struct EnergyMark {
    int index = 0;
    double joules = 0;
  };
  // One GPU's job SM share: the latest reading and when it was read.
  struct HeldShare {
    int index = 0;
    int mig_instance = -1;
    double ratio = 0;
    double mono_s = 0;
  };
  // One GPU's job SM share over a span's samples, held values included.
  struct ShareMean {
    int index = 0;
    int mig_instance = -1;
    StatAccumulator ratio;
  };
  struct OpenEpoch {
    double start_t = 0;
    // The script's framework call, as its first epoch_begin said.
    std::optional<int64_t> call;
    std::map<int, double> begun;                      // rank -> t
    std::map<int, std::pair<double, int64_t>> ended;  // rank -> (t, steps)
    // rank -> its share of its timed loop spent waiting for batches, by its
    // own counters at its epoch_begin and epoch_end (exact, where the mean of
    // the samples would blur the epoch's edges).
    std::map<int, double> wait_share;
    // The steps of a rank the run ended inside the epoch: its process's step
    // count when it began the epoch (epoch_begin's steps) and when it said bye
    // without having ended it (client_end's steps). rank -> (pid, steps).
    std::map<int, std::pair<int, int64_t>> begun_steps;
    std::map<int, int64_t> final_steps;  // rank -> steps
    Aggregator resources;
    std::vector<ShareMean> job_sm;
    // Energy over the epoch, integrated from the power of each sample (the
    // energy counters themselves are read only once per row).
    std::vector<EnergyMark> gpu_joules;
    std::optional<double> cpu_joules;
    // training.steps when the epoch began (at least the previous sample's and
    // the beginning process's count) and at its latest sample: the steps of an
    // epoch that never ended when no rank's own count says them.
    std::optional<double> steps_first, steps_last;
    std::optional<double> last_step_t;  // the sample that first showed steps_last
    // The lowest rank's logs: its scalars when it ended the epoch.
    std::optional<int> logs_rank;
    std::vector<std::pair<std::string, double>> logs;
  };
  struct PhaseTotals {
    double seconds = 0;
    int count = 0;
    Aggregator resources;
    std::vector<ShareMean> job_sm;
    // Over a sample interval wholly inside the phase, training.steps advanced
    // or a process timed its data wait (a loop under m.data()).
    bool wait_measured = false;
  };

  // `now`: the sample the marker came with.
  void Mark(const TrainingEvent& m, const Sample& now, std::vector<Event>* events);
  void Close(int64_t index, OpenEpoch& e, double end_t, bool complete, const Sample* now,
             std::vector<Event>* events);
  // Credits the time since the last change to the current phase.
  void Switch(double t);
  // Where time goes now: the current phase, else training inside an epoch.
  const std::string& Effective() const;
  // Adds each GPU's held job SM share at `sample` to `means`.
  void AddShares(const Sample& sample, std::vector<ShareMean>* means) const;

  // Epochs begun and not yet ended by every rank that began them; at most
  // kMaxOpenEpochs (docs/markers.md).
  static constexpr size_t kMaxOpenEpochs = 64;
  std::map<int64_t, OpenEpoch> open_;
  // The epochs each framework call planned, as its first epoch_begin said.
  std::map<int64_t, int64_t> planned_;
  std::vector<EpochRecord> epochs_;
  std::string phase_;       // the phase time now goes to; empty: none
  double phase_since_ = 0;  // unix seconds
  std::map<std::string, PhaseTotals> phases_;
  bool explicit_train_ = false;       // a "train" phase was marked: epochs count none of their own
  std::optional<double> last_steps_;  // training.steps of the previous sample
  double last_mono_s_ = 0;            // the previous sample's time, for energy
  bool have_last_ = false;
  // The latest power readings, held between the samples that carry them (RAPL
  // is read once per row).
  std::vector<EnergyMark> gpu_watts_;  // joules field holds watts
  std::optional<double> cpu_watts_;
  // The latest job SM share of each GPU, held for at most kShareHeld_s: NVML's
  // process utilization is read every 5 s (sources/nvml/nvml_backend.h
  // kProcessUtilEvery_s), so three missed readings let it go.
  static constexpr double kShareHeld_s = 15;
  std::vector<HeldShare> job_sm_;
};

}  // namespace tv

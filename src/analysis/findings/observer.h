// FindingsObserver: the live side of the analysis. On the sampler thread it
// collects what the training processes say and hands each row, as
// samples.jsonl will hold it, to the Analyzer; findings go to the sinks as
// events, and each row carries the health score so far. Its part of
// summary.json: the analyzer's "health", "findings" and "memory_trends".
//
// Thread safety: a SampleObserver, fed on the sampler thread; the accessors
// and AddTo after the sampler stopped.
#pragma once

#include <functional>
#include <vector>

#include "analysis/findings/analyzer.h"
#include "core/sampler.h"
#include "store/summary_part.h"

namespace tv {

class FindingsObserver final : public SampleObserver, public SummaryPart {
 public:
  explicit FindingsObserver(Thresholds thresholds = Thresholds(), double interval_s = 1)
      : analyzer_(thresholds, interval_s) {}

  void OnSample(const Sample& sample, std::vector<Event>* events) override;
  void OnRow(Row* row, std::vector<Event>* events) override;
  void OnFinish(double t, std::vector<Event>* events) override;

  const Analyzer& analyzer() const { return analyzer_; }
  void AddTo(RunSummary* summary) const override;
  // How the job ended, judged at OnFinish; set from the thread that stops the
  // sampler, before it stops it.
  void set_job_end(JobEnd end) { job_end_ = std::move(end); }
  // Called on the sampler thread with each memory risk as its finding opens
  // (the back-channel to the training processes).
  void set_risk_handler(std::function<void(const MemoryRisk&)> handler) {
    on_risk_ = std::move(handler);
  }
  // Called on the sampler thread with each finding as it opens (the stacks
  // of a stalled job are asked for then).
  void set_open_handler(std::function<void(FindingId, const FindingSubject&)> handler) {
    on_open_ = std::move(handler);
  }
  // Called on the sampler thread when a rule needs a profile of the next
  // steps to judge a finding (input-bound when nothing measures the wait).
  void set_probe_handler(std::function<void(FindingId)> handler) { on_probe_ = std::move(handler); }

 private:
  // Hands the analyzer the marks up to `until_t`, in time order.
  void FeedMarks(double until_t, std::vector<Event>* events);

  Analyzer analyzer_;
  std::vector<Mark> pending_;
  Frame frame_;
  std::function<void(const MemoryRisk&)> on_risk_;
  std::function<void(FindingId, const FindingSubject&)> on_open_;
  std::function<void(FindingId)> on_probe_;
  std::optional<JobEnd> job_end_;
};

}  // namespace tv

#include "core/sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tv {

Sampler::Sampler(SamplerOptions options, Clock* clock, std::vector<std::unique_ptr<Source>> sources,
                 SinkThread* sinks, SampleObserver* observer)
    : options_(options),
      clock_(clock),
      sources_(std::move(sources)),
      sinks_(sinks),
      observer_(observer),
      period_s_(1.0 / options.sample_hz),
      ticks_per_row_(
          std::max(1, static_cast<int>(std::lround(options.interval_s * options.sample_hz)))) {}

Sampler::~Sampler() { Stop(); }

void Sampler::Start() {
  start_mono_ = clock_->MonotonicSeconds();
  start_wall_ = clock_->WallSeconds();
  started_ = true;
  thread_ = std::thread([this] { Loop(-1); });
}

void Sampler::RunTicks(int ticks) {
  if (!started_) {
    start_mono_ = clock_->MonotonicSeconds();
    start_wall_ = clock_->WallSeconds();
    started_ = true;
  }
  Loop(ticks);
}

void Sampler::Stop() {
  stop_.Stop();
  if (thread_.joinable()) thread_.join();
  Finish();
}

void Sampler::Loop(int max_ticks) {
  int64_t k = static_cast<int64_t>(ticks_.load());
  for (int n = 0; max_ticks < 0 || n < max_ticks; ++n) {
    double due = start_mono_ + static_cast<double>(k) * period_s_;
    if (!clock_->SleepUntil(due, stop_)) return;
    double now = clock_->MonotonicSeconds();
    if (now - due >= period_s_) {
      // Fell behind (suspended, overloaded): skip the missed ticks instead of bunching them.
      int64_t behind = static_cast<int64_t>((now - due) / period_s_);
      late_ticks_.fetch_add(static_cast<uint64_t>(behind));
      k += behind;
    }
    TickOnce(k);
    ++k;
  }
}

void Sampler::TickOnce(int64_t k) {
  Tick tick;
  tick.mono_s = clock_->MonotonicSeconds();
  tick.row_tick = (k + 1) % ticks_per_row_ == 0;
  sample_.mono_s = tick.mono_s;
  sample_.t = clock_->WallSeconds();
  // Reset field by field so the vectors keep their capacity: a steady tick allocates nothing.
  std::vector<double> cores = std::move(sample_.host.core_util_ratio);
  sample_.host = HostSample{};
  sample_.host.core_util_ratio = std::move(cores);
  sample_.host.core_util_ratio.clear();
  JobSample& job = sample_.job;
  std::vector<int> pids = std::move(job.pids);
  std::vector<ProcessInfo> started = std::move(job.started), exited = std::move(job.exited);
  std::vector<ProcessUsage> members = std::move(job.members);
  job = JobSample{};
  job.pids = std::move(pids);
  job.members = std::move(members);
  job.members.clear();
  job.started = std::move(started);
  job.exited = std::move(exited);
  job.pids.clear();
  job.started.clear();
  job.exited.clear();
  sample_.gpus.clear();
  sample_.training.Clear();
  notices_.clear();
  for (auto& source : sources_) source->Read(tick, &sample_, &notices_);
  DeriveRatios(&sample_);

  for (const Notice& n : notices_) {
    Event e{sample_.t, "source_unavailable", {{"source", n.source}, {"message", n.message}}};
    sinks_->PushEvent(std::move(e));
  }
  for (const ProcessInfo& p : sample_.job.started) {
    sinks_->PushEvent(
        Event{sample_.t,
              "process_start",
              {{"pid", p.pid}, {"ppid", p.ppid}, {"name", p.name}, {"cmdline", p.cmdline}}});
  }
  for (const ProcessInfo& p : sample_.job.exited) {
    sinks_->PushEvent(Event{sample_.t, "process_exit", {{"pid", p.pid}, {"name", p.name}}});
  }

  PushMarkerEvents();
  ObserveSample();

  interval_.Add(sample_);
  run_.Add(sample_);
  ticks_.fetch_add(1);
  if (tick.row_tick) {
    double elapsed = static_cast<double>(k + 1) * period_s_;
    sinks_->PushRow(interval_.Take(sample_.t, elapsed));
  }
}

void Sampler::ObserveSample() {
  if (observer_ == nullptr) return;
  observer_->OnSample(sample_, &observer_events_);
  for (Event& e : observer_events_) sinks_->PushEvent(std::move(e));
  observer_events_.clear();
}

void Sampler::PushMarkerEvents() {
  const TrainingSample& t = sample_.training;
  if (!t.malformed_error.empty()) {
    sinks_->PushEvent(Event{
        sample_.t,
        "marker_malformed",
        {{"message", t.malformed_error}, {"note", "further malformed markers are only counted"}}});
  }
  for (const Marker& m : t.markers) {
    if (m.type == MarkerType::kScalars || m.type == MarkerType::kAllocator) continue;  // in rows
    nlohmann::ordered_json fields = {{"pid", m.pid}, {"rank", m.rank}};
    if (m.epoch) fields["epoch"] = *m.epoch;
    if (m.steps) fields["steps"] = *m.steps;
    if (!m.phase.empty()) fields["phase"] = m.phase;
    if (!m.framework.empty()) fields["framework"] = m.framework;
    if (!m.exception.empty()) fields["exception"] = m.exception, fields["message"] = m.message;
    std::string type(MarkerTypeName(m.type));
    if (m.type == MarkerType::kHello) type = "client_start";
    if (m.type == MarkerType::kBye) type = "client_end";
    sinks_->PushEvent(Event{m.t, std::move(type), std::move(fields)});
  }
}

void Sampler::Finish() {
  if (finished_ || !started_) return;
  finished_ = true;
  // What the sources still hold that is not a reading of the machine (a
  // training process's last markers and step counts, sent just before it
  // exited) belongs to the run. The machine is not sampled again (the job may
  // be gone): the last row gets one more sample holding the latest readings
  // with the final training state, so its steps are the final count.
  bool flushed = false;
  for (auto& source : sources_) flushed = source->Flush(&sample_) || flushed;
  if (flushed) {
    PushMarkerEvents();
    ObserveSample();
    interval_.Add(sample_);
    run_.Add(sample_);
  }
  double now_mono = clock_->MonotonicSeconds();
  double elapsed = now_mono - start_mono_;
  double t = clock_->WallSeconds();
  if (interval_.samples() > 0) sinks_->PushRow(interval_.Take(t, elapsed));
  run_row_ = run_.Peek(t, elapsed);
  if (observer_ != nullptr) {
    observer_->OnFinish(t, &observer_events_);
    for (Event& e : observer_events_) sinks_->PushEvent(std::move(e));
    observer_events_.clear();
  }
}

void DeriveRatios(Sample* s) {
  HostSample& h = s->host;
  if (h.memory_total_bytes) {
    h.memory_limit_bytes = h.memory_limit_bytes
                               ? std::min(*h.memory_limit_bytes, *h.memory_total_bytes)
                               : *h.memory_total_bytes;
  }
  JobSample& j = s->job;
  if (j.cpu_cores && h.cpu_limit_cores && *h.cpu_limit_cores > 0) {
    j.cpu_util_ratio = *j.cpu_cores / *h.cpu_limit_cores;
  }
  if (j.memory_bytes && h.memory_limit_bytes && *h.memory_limit_bytes > 0) {
    j.memory_util_ratio = *j.memory_bytes / *h.memory_limit_bytes;
  }
}

}  // namespace tv

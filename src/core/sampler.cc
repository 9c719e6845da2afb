#include "core/sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/notice_event.h"
#include "core/thread.h"

namespace tv {

Sampler::Sampler(SamplerOptions options, Clock* clock, std::vector<std::unique_ptr<Source>> sources,
                 SinkThread* sinks, std::vector<SampleObserver*> observers)
    : options_(options),
      clock_(clock),
      sources_(std::move(sources)),
      source_failed_(sources_.size(), false),
      sinks_(sinks),
      observers_(std::move(observers)),
      observer_failed_(observers_.size(), false),
      period_s_(1.0 / options.sample_hz),
      ticks_per_row_(
          std::max(1, static_cast<int>(std::lround(options.interval_s * options.sample_hz)))),
      next_row_tick_(ticks_per_row_) {}

Sampler::~Sampler() {
  Stop();
  // Left behind by Stop: it would come back into freed memory. The caller
  // should have kept this object alive; detach is the least harm left.
  if (thread_.joinable()) thread_.detach();
}

void Sampler::Start() {
  start_mono_ = clock_->MonotonicSeconds();
  start_wall_ = clock_->WallSeconds();
  started_ = true;
  thread_ = std::thread([this] {
    NameThisThread("tv-sampler");
    RunGuarded("the sampler", "sampling stops, the rows so far are kept", [this] { Loop(-1); });
    std::lock_guard<std::mutex> lock(done_mu_);
    done_ = true;
    done_cv_.notify_all();
  });
}

void Sampler::RunTicks(int ticks) {
  if (!started_) {
    start_mono_ = clock_->MonotonicSeconds();
    start_wall_ = clock_->WallSeconds();
    started_ = true;
  }
  Loop(ticks);
}

bool Sampler::Stop() {
  stop_.Stop();
  if (finished_) return !abandoned_;
  bool complete = WaitForThread();
  Finish(complete);
  return complete;
}

bool Sampler::WaitForThread() {
  if (!thread_.joinable()) return true;
  {
    std::unique_lock<std::mutex> lock(done_mu_);
    auto timeout = std::chrono::duration<double>(options_.stop_timeout_s);
    if (done_cv_.wait_for(lock, timeout, [this] { return done_; })) {
      lock.unlock();
      thread_.join();
      return true;
    }
  }
  {
    std::lock_guard<std::mutex> lock(state_mu_);
    abandoned_ = true;
  }
  thread_.detach();
  fmt::print(stderr,
             "trainvitals: sampling did not stop within {} s (a source is stuck, e.g. in a GPU "
             "driver call): it is left behind; the summary holds what was sampled until then\n",
             options_.stop_timeout_s);
  return false;
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

void Sampler::ReadSources(const Tick& tick) {
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (source_failed_[i]) continue;
    try {
      sources_[i]->Read(tick, &sample_, &notices_);
    } catch (...) {
      source_failed_[i] = true;
      notices_.push_back(
          Notice{std::string(sources_[i]->name()),
                 fmt::format("failed ({}): turned off, the rest goes on", CurrentExceptionText())});
    }
  }
}

void Sampler::TickOnce(int64_t k) {
  Tick tick;
  tick.mono_s = clock_->MonotonicSeconds();
  // A row closes at its boundary tick or, when that tick was skipped (fell
  // behind), at the first tick after it: no interval goes without its row.
  tick.row_tick = k + 1 >= next_row_tick_;
  sample_.mono_s = tick.mono_s;
  sample_.t = clock_->WallSeconds();
  // Reset field by field so the vectors keep their capacity: a steady tick allocates nothing.
  std::vector<double> cores = std::move(sample_.host.core_util_ratio);
  sample_.host = HostSample{};
  sample_.host.core_util_ratio = std::move(cores);
  sample_.host.core_util_ratio.clear();
  JobSample& job = sample_.job;
  std::vector<int> pids = std::move(job.pids);
  std::vector<ProcessInfo> started = std::move(job.started), exited = std::move(job.exited),
                           execed = std::move(job.execed);
  std::vector<ProcessUsage> members = std::move(job.members);
  job = JobSample{};
  job.pids = std::move(pids);
  job.members = std::move(members);
  job.members.clear();
  job.started = std::move(started);
  job.exited = std::move(exited);
  job.execed = std::move(execed);
  job.execed.clear();
  job.pids.clear();
  job.started.clear();
  job.exited.clear();
  sample_.gpus.clear();
  sample_.training.Clear();
  notices_.clear();
  ReadSources(tick);

  std::lock_guard<std::mutex> lock(state_mu_);
  if (abandoned_) return;  // came back from a stuck source after Stop gave up on it
  DeriveRatios(&sample_);
  for (const Notice& n : notices_) {
    sinks_->PushEvent(Event{sample_.t, EventType::kSourceUnavailable, NoticeFields(n)});
  }
  for (const ProcessInfo& p : sample_.job.started) {
    sinks_->PushEvent(
        Event{sample_.t,
              EventType::kProcessStart,
              {{"pid", p.pid}, {"ppid", p.ppid}, {"name", p.name}, {"cmdline", p.cmdline}}});
  }
  for (const ProcessInfo& p : sample_.job.exited) {
    sinks_->PushEvent(
        Event{sample_.t, EventType::kProcessExit, {{"pid", p.pid}, {"name", p.name}}});
  }

  ObserveSample();

  interval_.Add(sample_);
  run_.Add(sample_);
  ticks_.fetch_add(1);
  if (tick.row_tick) {
    next_row_tick_ = ((k + 1) / ticks_per_row_ + 1) * ticks_per_row_;
    double elapsed = static_cast<double>(k + 1) * period_s_;
    PushRow(interval_.Take(sample_.t, elapsed));
  }
}

template <typename Observe>
void Sampler::EachObserver(Observe&& observe) {
  for (size_t i = 0; i < observers_.size(); ++i) {
    if (observer_failed_[i]) continue;
    try {
      observe(*observers_[i]);
    } catch (...) {
      observer_failed_[i] = true;
      observer_events_.push_back(
          Event{sample_.t,
                EventType::kError,
                {{"message", fmt::format("an analysis of the samples failed ({}): turned off, "
                                         "the rest goes on",
                                         CurrentExceptionText())}}});
    }
  }
}

void Sampler::ObserveSample() {
  EachObserver([this](SampleObserver& o) { o.OnSample(sample_, &observer_events_); });
  for (Event& e : observer_events_) sinks_->PushEvent(std::move(e));
  observer_events_.clear();
}

void Sampler::PushRow(Row row) {
  EachObserver([this, &row](SampleObserver& o) { o.OnRow(&row, &observer_events_); });
  sinks_->PushRow(std::move(row));
  for (Event& e : observer_events_) sinks_->PushEvent(std::move(e));
  observer_events_.clear();
}

void Sampler::Finish(bool complete) {
  std::lock_guard<std::mutex> lock(state_mu_);
  if (finished_ || !started_) return;
  finished_ = true;
  // What the sources still hold that is not a reading of the job (a training
  // process's last markers and step counts, sent just before it exited; the
  // host's counters read once a row, for the partial last row) belongs to the
  // run. The job is not sampled again (it may be gone): the last row gets one
  // more sample holding the latest readings with the final training state, so
  // its steps are the final count. Not when the thread was left in a source:
  // the sources are its, not ours.
  bool flushed = false;
  for (size_t i = 0; complete && i < sources_.size(); ++i) {
    if (source_failed_[i]) continue;
    try {
      flushed = sources_[i]->Flush(&sample_) || flushed;
    } catch (...) {
      source_failed_[i] = true;
    }
  }
  if (flushed) {
    ObserveSample();
    interval_.Add(sample_);
    run_.Add(sample_);
  }
  double now_mono = clock_->MonotonicSeconds();
  double elapsed = now_mono - start_mono_;
  double t = clock_->WallSeconds();
  if (interval_.samples() > 0) PushRow(interval_.Take(t, elapsed));
  run_row_ = run_.Peek(t, elapsed);
  EachObserver([this, t](SampleObserver& o) { o.OnFinish(t, &observer_events_); });
  for (Event& e : observer_events_) sinks_->PushEvent(std::move(e));
  observer_events_.clear();
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

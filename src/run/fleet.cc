#include "run/fleet.h"

#include <algorithm>

#include "store/run_summary.h"

namespace tv {
namespace {

std::optional<double> Lower(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

}  // namespace

std::optional<double> JobBusyRatio(const GpuSample& gpu) {
  std::optional<double> busy = gpu.sm_active_ratio ? gpu.sm_active_ratio : gpu.util_ratio;
  if (!busy || gpu.other_processes.value_or(0) <= 0) return busy;
  if (gpu.job_sm_util_ratio) return std::min(*busy, *gpu.job_sm_util_ratio);
  double mine = gpu.job_processes.value_or(0);
  return *busy * mine / (mine + *gpu.other_processes);
}

Sample JobSampleOf(const Sample& node, const NodeJob& job) {
  Sample s;
  s.mono_s = node.mono_s;
  s.t = node.t;
  s.host = node.host;
  // DeriveRatios below lowers it to MemTotal too.
  s.host.memory_limit_bytes = Lower(node.host.memory_limit_bytes, job.memory_limit_bytes);
  s.host.cpu_limit_cores = Lower(node.host.cpu_limit_cores, job.cpu_limit_cores);
  s.job = job.job;
  for (const JobGpuShare& share : job.gpus) {
    if (share.gpu >= node.gpus.size()) continue;
    GpuSample& g = s.gpus.emplace_back(node.gpus[share.gpu]);
    g.processes = GpuProcessList{};
    g.other_memory_bytes.reset();
    g.other_processes.reset();
    if (const GpuProcessList& all = node.gpus[share.gpu].processes; all.known) {
      double memory = 0;
      for (const GpuProcess& p : all) memory += p.memory_bytes.value_or(0);
      g.other_processes = static_cast<double>(all.size) - share.processes;
      g.other_memory_bytes = std::max(0.0, memory - share.memory_bytes.value_or(0));
    }
    g.job_processes = share.processes;
    g.job_memory_bytes = share.processes > 0 ? share.memory_bytes : std::optional<double>(0);
    g.job_sm_util_ratio = share.processes > 0 ? share.sm_util_ratio : std::optional<double>(0);
  }
  DeriveRatios(&s);
  return s;
}

void Fleet::Tag(const Watch& w, std::vector<Event>* events, std::vector<Event>* out) {
  for (Event& e : *events) {
    e.fields["job"] = w.identity->job;
    out->push_back(std::move(e));
  }
  events->clear();
}

void Fleet::Account(double t, const Sample& own, Watch* w) const {
  double dt =
      w->last_t > 0 ? std::clamp(t - w->last_t, 0.0, 2 * options_.interval_s) : options_.interval_s;
  w->last_t = t;
  for (const GpuSample& g : own.gpus) {
    w->gpu_held_s += dt;
    if (std::optional<double> busy = JobBusyRatio(g)) w->gpu_busy_s += dt * *busy;
  }
  if (own.job.memory_bytes) {
    w->memory_peak_bytes = std::max(w->memory_peak_bytes.value_or(0), *own.job.memory_bytes);
  }
}

std::shared_ptr<const nlohmann::ordered_json> Fleet::SummaryOf(const Watch& w) {
  RunOutcome outcome;
  outcome.start_t = w.first_t;
  outcome.end_t = w.ended_t;
  outcome.samples = w.whole.samples();
  outcome.rows_written = w.rows;
  Row whole = w.whole.Peek(*w.ended_t, *w.ended_t - w.started_t);
  RunSummary summary = tv::SummaryOf(outcome, whole);
  // In run/pipeline.h's kSummaryOrder: the cost reads the health.
  w.findings->AddTo(&summary);
  w.cost->AddTo(&summary);
  return std::make_shared<const nlohmann::ordered_json>(RunSummaryJson(summary));
}

void Fleet::OnSample(const Sample& sample, std::vector<Event>* events) {
  std::vector<std::string> seen;
  for (const NodeJob& job : sample.node_jobs) seen.push_back(JobKey(*job.identity));
  std::sort(seen.begin(), seen.end());
  for (const NodeJob& job : sample.node_jobs) {
    std::string key = JobKey(*job.identity);
    auto it = watches_.find(key);
    if (it != watches_.end() && it->second.ended_t) {  // its name taken again: a new job
      watches_.erase(it);
      it = watches_.end();
    }
    if (it == watches_.end()) {
      size_t running = static_cast<size_t>(std::count_if(
          watches_.begin(), watches_.end(), [](const auto& w) { return !w.second.ended_t; }));
      if (running >= options_.max_jobs) {
        if (std::find(dropped_.begin(), dropped_.end(), key) == dropped_.end()) {
          dropped_.push_back(key);
          ++dropped_total_;
        }
        continue;
      }
      it = watches_.emplace(key, Watch{}).first;
      it->second.started_t = job.started_t;
      it->second.first_t = sample.t;
      it->second.findings =
          std::make_unique<FindingsObserver>(options_.thresholds, options_.interval_s);
      it->second.cost = std::make_unique<CostForecaster>(options_.cost_rates, gpus_);
    }
    Watch& w = it->second;
    w.identity = job.identity;
    w.sessions = job.sessions;
    Sample own = JobSampleOf(sample, job);
    std::vector<Event> said;
    w.findings->OnSample(own, &said);
    w.cost->OnSample(own, &said);
    Tag(w, &said, events);
    w.interval.Add(own);
    w.whole.Add(own);
    Account(sample.t, own, &w);
    w.allocated.clear();
    for (const JobGpuShare& share : job.gpus) {
      if (share.allocated && share.gpu < sample.gpus.size()) {
        const GpuSample& g = sample.gpus[share.gpu];
        w.allocated.emplace_back(g.index, g.mig_instance);
      }
    }
  }
  for (auto& [key, w] : watches_) {
    if (!w.ended_t && !std::binary_search(seen.begin(), seen.end(), key)) w.ended_t = sample.t;
  }
  std::erase_if(dropped_, [&](const std::string& key) {
    return !std::binary_search(seen.begin(), seen.end(), key);
  });
}

void Fleet::OnRow(Row* row, std::vector<Event>* events) {
  row->jobs.clear();
  std::vector<Event> said;
  for (auto it = watches_.begin(); it != watches_.end();) {
    Watch& w = it->second;
    if (w.interval.samples() > 0 || (w.ended_t && w.last && !w.last->ended_t)) {
      auto job = std::make_shared<JobRow>();
      job->identity = w.identity;
      job->started_t = w.started_t;
      job->ended_t = w.ended_t;
      if (w.interval.samples() > 0) {
        job->row = w.interval.Take(row->t, row->t - w.started_t);
        w.findings->OnRow(&job->row, &said);
        w.cost->OnRow(&job->row, &said);
        ++w.rows;
      } else {
        job->row = w.last->row;
      }
      job->gpu_held_seconds = w.gpu_held_s;
      job->gpu_busy_seconds = w.gpu_busy_s;
      job->memory_peak_bytes = w.memory_peak_bytes;
      job->sessions = w.ended_t ? std::vector<JobSession>() : w.sessions;
      if (w.ended_t && !w.finished) {
        w.finished = true;
        w.findings->OnFinish(*w.ended_t, &said);
        job->row.findings.clear();
        w.findings->analyzer().FindingStates(&job->row.findings);
        job->summary = SummaryOf(w);
      }
      Tag(w, &said, events);
      for (const GpuRow& g : job->row.gpus) {
        job->allocated.push_back(
            std::find(w.allocated.begin(), w.allocated.end(), std::pair{g.index, g.mig_instance}) !=
            w.allocated.end());
      }
      w.last = std::move(job);
    }
    // Gone once its last row (with its summary) has been on a row.
    if (w.ended_t && row->t - *w.ended_t > options_.linger_s && (w.final_shown || !w.last)) {
      it = watches_.erase(it);
      continue;
    }
    if (w.last) row->jobs.push_back(w.last);
    w.final_shown = w.finished;
    ++it;
  }
  row->jobs_dropped = dropped_total_;
}

}  // namespace tv

#include "analysis/phases.h"

#include <algorithm>
#include <cmath>

#include "analysis/round.h"
#include "core/metrics.h"

namespace tv {
namespace {

const std::string kTrain = "train";
const std::string kNone;

int64_t Whole(double v) { return std::llround(v); }

// The job's and each GPU's figures over a span, from its reduced row and the
// GPUs' held job SM shares over it. `wait_measured`: the span's data-wait share
// is its training loop's (else it is left out: a boundary sample may carry the
// wait of the training next to it).
template <typename ShareMeans>
SpanResources ResourcesOf(const Row& row, bool wait_measured, const ShareMeans& shares) {
  SpanResources o;
  if (auto s = FindStat(metric::kJobCpuCores, row.values)) o.cpu_cores_mean = RoundTo(s->mean, 1e3);
  if (auto s = FindStat(metric::kJobMemoryBytes, row.values)) o.memory_bytes_max = Whole(s->max);
  if (auto s = FindStat(metric::kHostMemoryUsedBytes, row.values))
    o.host_memory_used_bytes_max = Whole(s->max);
  // The mean over the span's samples in which a process timed its data wait.
  if (auto s = FindStat(metric::kTrainingDataWaitRatio, row.values); s && wait_measured)
    o.data_wait_ratio = RoundTo(s->mean, 1e4);
  for (const GpuRow& g : row.gpus) {
    SpanGpu& j = o.gpus.emplace_back();
    j.index = g.index;
    if (g.mig_instance >= 0) j.mig = g.mig_instance;
    if (auto s = FindStat(metric::kGpuUtilRatio, g.values))
      j.util_ratio_mean = RoundTo(s->mean, 1e4);
    if (auto s = FindStat(metric::kGpuMemoryUsedBytes, g.values))
      j.memory_used_bytes_max = Whole(s->max);
    if (auto s = FindStat(metric::kGpuSmActiveRatio, g.values))
      j.sm_active_ratio_mean = RoundTo(s->mean, 1e4);
    if (auto s = FindStat(metric::kGpuJobMemoryBytes, g.values))
      j.job_memory_bytes_max = Whole(s->max);
    std::optional<Stat> job_sm = FindStat(metric::kGpuJobSmUtilRatio, g.values);
    for (const auto& m : shares) {
      if (m.index == g.index && m.mig_instance == g.mig_instance) job_sm = m.ratio.Get();
    }
    if (job_sm) j.job_sm_util_ratio_mean = RoundTo(job_sm->mean, 1e4);
    if (auto s = FindStat(metric::kGpuOtherMemoryBytes, g.values))
      j.other_memory_bytes_max = Whole(s->max);
    if (auto s = FindStat(metric::kGpuAllocatorPeakBytes, g.values))
      j.allocator_peak_bytes = Whole(s->max);
    if (auto s = FindStat(metric::kGpuTemperatureCelsius, g.values))
      j.temperature_celsius_max = RoundTo(s->max, 10);
    if (auto s = FindStat(metric::kGpuPowerWatts, g.values))
      j.power_watts_mean = RoundTo(s->mean, 10);
  }
  return o;
}

}  // namespace

void PhaseTracker::OnSample(const Sample& sample, std::vector<Event>* events) {
  // The interval since the previous sample belongs to the epochs open during
  // it: add it before this sample's markers open or close any.
  double dt = have_last_ ? std::max(0.0, sample.mono_s - last_mono_s_) : 0.0;
  last_mono_s_ = sample.mono_s;
  have_last_ = true;
  auto find = [](std::vector<EnergyMark>& v, int index) {
    auto it =
        std::find_if(v.begin(), v.end(), [&](const EnergyMark& m) { return m.index == index; });
    return it != v.end() ? it : v.insert(v.end(), {index, 0.0});
  };
  for (const GpuSample& g : sample.gpus) {
    if (g.power_watts) find(gpu_watts_, g.index)->joules = *g.power_watts;
    if (!g.job_sm_util_ratio) continue;
    auto held = std::find_if(job_sm_.begin(), job_sm_.end(), [&](const HeldShare& h) {
      return h.index == g.index && h.mig_instance == g.mig_instance;
    });
    if (held == job_sm_.end()) held = job_sm_.insert(job_sm_.end(), {g.index, g.mig_instance});
    held->ratio = *g.job_sm_util_ratio;
    held->mono_s = sample.mono_s;
  }
  if (sample.host.cpu_power_watts) cpu_watts_ = sample.host.cpu_power_watts;
  // The step count read with this sample: the latest of every epoch open at
  // it, those its markers begin included (read after them).
  auto note_steps = [&sample](OpenEpoch& e) {
    std::optional<double> steps = sample.training.steps;
    if (!steps) return;
    if (*steps > e.steps_first.value_or(0) && steps != e.steps_last) e.last_step_t = sample.t;
    e.steps_last = steps;
  };
  for (auto& [index, e] : open_) {
    e.resources.Add(sample);
    AddShares(sample, &e.job_sm);
    note_steps(e);
    for (const EnergyMark& w : gpu_watts_) find(e.gpu_joules, w.index)->joules += w.joules * dt;
    if (cpu_watts_) e.cpu_joules = e.cpu_joules.value_or(0) + *cpu_watts_ * dt;
  }
  const auto& changes = sample.training.phase_changes;
  const auto& markers = sample.training.events;
  if (const std::string& now = Effective(); !now.empty()) {
    PhaseTotals& p = phases_[now];
    p.resources.Add(sample);
    AddShares(sample, &p.job_sm);
    // Only an interval that crossed no boundary tells: one that did may carry
    // the steps and the wait of the training that began or resumed inside it.
    bool crossed =
        !changes.empty() || std::any_of(markers.begin(), markers.end(), [](const auto& m) {
          return m.type == EventType::kEpochBegin || m.type == EventType::kEpochEnd;
        });
    bool stepped = sample.training.steps && last_steps_ && *sample.training.steps > *last_steps_;
    if (!crossed && (stepped || sample.training.data_wait_ratio)) p.wait_measured = true;
  }
  // The source says when the phase changed (the lowest rank's innermost one);
  // taken in time order with the epoch markers, which also move time into and
  // out of training.
  size_t next_change = 0;
  for (size_t i = 0; i <= markers.size(); ++i) {
    for (; next_change < changes.size() &&
           (i == markers.size() || changes[next_change].t <= markers[i].t);
         ++next_change) {
      const PhaseChange& c = changes[next_change];
      Switch(c.t);
      phase_ = c.phase;
      if (c.began && c.phase == kTrain && !explicit_train_) {
        // The script marks its training itself: the epochs counted as
        // training before it said so (an epoch begins just before its
        // "train" phase) were these phases.
        explicit_train_ = true;
        phases_[kTrain].count = 0;
      }
      if (c.began) ++phases_[c.phase].count;
    }
    if (i < markers.size()) Mark(markers[i], sample, events);
  }
  for (auto& [index, e] : open_) note_steps(e);
  if (sample.training.steps) last_steps_ = sample.training.steps;
}

void PhaseTracker::Mark(const TrainingEvent& m, const Sample& now, std::vector<Event>* events) {
  int rank = std::max(m.rank, 0);
  switch (m.type) {
    case EventType::kEpochBegin: {
      if (open_.empty()) {
        Switch(m.t);
        if (phase_.empty() && !explicit_train_) ++phases_[kTrain].count;
      }
      auto [it, fresh] = open_.try_emplace(*m.epoch);
      if (fresh && open_.size() > kMaxOpenEpochs) {
        // Epochs begun and never ended (a sender's bug): the lowest goes out as
        // incomplete, so a stream of them cannot grow this without bound.
        auto oldest = open_.begin();
        bool this_one = oldest == it;
        Close(oldest->first, oldest->second, m.t, false, &now, events);
        open_.erase(oldest);
        if (this_one) break;
      }
      if (fresh) {
        // Both are counts the job had reached at the begin; the previous
        // sample's alone misses the steps the epoch before took since it.
        it->second.start_t = m.t;
        it->second.steps_first =
            std::max(last_steps_.value_or(0), static_cast<double>(m.steps.value_or(0)));
      }
      it->second.begun.try_emplace(rank, m.t);
      if (m.steps) it->second.begun_steps.try_emplace(rank, m.pid, *m.steps);
      if (!it->second.call) it->second.call = m.call;
      if (m.planned_epochs) planned_[m.call.value_or(0)] = *m.planned_epochs;
      break;
    }
    case EventType::kEpochEnd: {
      auto it = open_.find(*m.epoch);
      if (it == open_.end()) break;  // an end without a begin: nothing to measure against
      it->second.ended[rank] = {m.t, m.steps.value_or(0)};
      if (m.wait_s && m.timed_s && *m.timed_s > 0)
        it->second.wait_share[rank] = std::clamp(*m.wait_s / *m.timed_s, 0.0, 1.0);
      if (!it->second.logs_rank || rank < *it->second.logs_rank) {
        it->second.logs_rank = rank;
        it->second.logs = m.scalars;
      }
      bool all = std::all_of(it->second.begun.begin(), it->second.begun.end(),
                             [&](const auto& b) { return it->second.ended.count(b.first) > 0; });
      if (all) {
        double end = 0;
        for (const auto& [r, te] : it->second.ended) end = std::max(end, te.first);
        Close(it->first, it->second, end, true, &now, events);
        if (open_.size() == 1) Switch(end);
        open_.erase(it);
      }
      break;
    }
    case EventType::kClientEnd: {
      // Its count at its bye ends the epochs it began and left open; a hang-up
      // says no count.
      if (!m.steps) break;
      for (auto& [index, e] : open_) {
        auto begun = e.begun_steps.find(rank);
        if (begun == e.begun_steps.end() || begun->second.first != m.pid) continue;
        if (e.ended.count(rank) == 0) e.final_steps[rank] = *m.steps;
      }
      break;
    }
    default:
      break;
  }
}

void PhaseTracker::AddShares(const Sample& sample, std::vector<ShareMean>* means) const {
  for (const GpuSample& g : sample.gpus) {
    auto held = std::find_if(job_sm_.begin(), job_sm_.end(), [&](const HeldShare& h) {
      return h.index == g.index && h.mig_instance == g.mig_instance;
    });
    if (held == job_sm_.end() || sample.mono_s - held->mono_s > kShareHeld_s) continue;
    auto mean = std::find_if(means->begin(), means->end(), [&](const ShareMean& m) {
      return m.index == g.index && m.mig_instance == g.mig_instance;
    });
    if (mean == means->end()) mean = means->insert(means->end(), {g.index, g.mig_instance, {}});
    mean->ratio.Add(held->ratio);
  }
}

const std::string& PhaseTracker::Effective() const {
  if (!phase_.empty()) return phase_;
  return open_.empty() ? kNone : kTrain;
}

void PhaseTracker::Switch(double t) {
  const std::string& now = Effective();
  if (!now.empty() && t > phase_since_) phases_[now].seconds += t - phase_since_;
  phase_since_ = t;
}

void PhaseTracker::Close(int64_t index, OpenEpoch& e, double end_t, bool complete,
                         const Sample* now, std::vector<Event>* events) {
  double duration = std::max(0.0, end_t - e.start_t);
  // The most any rank took, by its own count: at its epoch_end, or from its
  // epoch_begin to its bye when the run ended inside the epoch.
  std::optional<int64_t> counted;
  for (const auto& [rank, te] : e.ended) counted = std::max(counted.value_or(0), te.second);
  if (!complete) {
    for (const auto& [rank, last] : e.final_steps) {
      auto begun = e.begun_steps.find(rank);
      if (begun != e.begun_steps.end())
        counted = std::max(counted.value_or(0), std::max<int64_t>(0, last - begun->second.second));
    }
  }
  int64_t steps = counted.value_or(0);
  // No rank's count: the sampler's, from the epoch's begin to its last sample.
  if (!counted && e.steps_first && e.steps_last)
    steps = std::max<int64_t>(0, std::llround(*e.steps_last - *e.steps_first));
  // An epoch shorter than one sample period: the sample it ended with.
  if (e.resources.samples() == 0 && now != nullptr) {
    e.resources.Add(*now);
    AddShares(*now, &e.job_sm);
  }
  EpochRecord rec;
  rec.epoch = index;
  rec.start_t = RoundTo(e.start_t, 1e3);
  rec.duration_s = RoundTo(duration, 1e3);
  rec.steps = steps;
  if (duration > 0 && steps > 0)
    rec.steps_per_second = RoundTo(static_cast<double>(steps) / duration, 1e2);
  rec.call = e.call;
  if (auto planned = planned_.find(e.call.value_or(0)); planned != planned_.end())
    rec.planned_epochs = planned->second;
  rec.complete = complete;
  Row row = e.resources.Peek(end_t, duration);
  rec.resources = ResourcesOf(row, true, e.job_sm);
  if (!e.wait_share.empty()) {
    double sum = 0;
    for (const auto& [rank, share] : e.wait_share) sum += share;
    rec.resources.data_wait_ratio = RoundTo(sum / static_cast<double>(e.wait_share.size()), 1e4);
  }
  for (SpanGpu& g : rec.resources.gpus) {
    for (const EnergyMark& m : e.gpu_joules) {
      if (m.index == g.index) g.energy_joules = RoundTo(m.joules, 10);
    }
  }
  if (e.cpu_joules) rec.resources.cpu_energy_joules = RoundTo(*e.cpu_joules, 10);
  for (const auto& [name, value] : e.logs) rec.logs.emplace_back(name, value);
  if (e.begun.size() > 1) {
    for (const auto& [rank, begin] : e.begun) {
      EpochRank& r = rec.ranks.emplace_back();
      r.rank = rank;
      auto ended = e.ended.find(rank);
      if (ended != e.ended.end()) {
        r.duration_s = RoundTo(ended->second.first - begin, 1e3);
        r.steps = ended->second.second;
      }
    }
  }
  epochs_.push_back(rec);
  events->push_back(Event{end_t, EventType::kEpoch, ToJson(rec)});
}

void PhaseTracker::OnFinish(double t, std::vector<Event>* events) {
  // An epoch cut short ends at its last step: what follows is the process's
  // end (a traceback, workers shutting down), not the epoch's work.
  double end = t;
  for (auto& [index, e] : open_) {
    double cut = e.last_step_t && *e.last_step_t < t ? std::max(*e.last_step_t, e.start_t) : t;
    Close(index, e, cut, false, nullptr, events);
    events->back().t = t;  // recorded now: events.jsonl stays in time order
    end = std::min(end, cut);
  }
  if (!open_.empty()) {
    Switch(end);
    phase_.clear();
    open_.clear();
  }
  Switch(t);
  phase_.clear();
}

void PhaseTracker::AddTo(RunSummary* summary) const {
  summary->epochs = epochs_;
  summary->phases = Phases();
}

PhaseRecords PhaseTracker::Phases() const {
  PhaseRecords out;
  double total = 0;
  for (const auto& [name, p] : phases_) total += p.seconds;
  std::vector<const std::string*> names;
  for (const char* known : {"train", "eval", "predict"}) {
    if (auto it = phases_.find(known); it != phases_.end()) names.push_back(&it->first);
  }
  for (const auto& [name, p] : phases_) {
    if (name != "train" && name != "eval" && name != "predict") names.push_back(&name);
  }
  for (const std::string* name_ptr : names) {
    const std::string& name = *name_ptr;
    const PhaseTotals& p = phases_.at(name);
    PhaseRecord j;
    j.duration_s = RoundTo(p.seconds, 1e3);
    j.count = p.count;
    if (total > 0) j.share = RoundTo(p.seconds / total, 1e4);
    j.resources =
        ResourcesOf(p.resources.Peek(0, p.seconds), name == kTrain || p.wait_measured, p.job_sm);
    out.emplace_back(name, std::move(j));
  }
  return out;
}

}  // namespace tv

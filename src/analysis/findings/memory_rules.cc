// Memory that creeps (memory_rules.h).
#include "analysis/findings/memory_rules.h"

#include <algorithm>
#include <cmath>

#include "analysis/findings/format.h"
#include "analysis/findings/window.h"
#include "core/format.h"

namespace tv {
namespace {

using Who = MemoryWho;

FindingSubject SubjectOf(const Who& who) {
  switch (who.kind) {
    case Who::Kind::kJob:
      return FindingSubject::MemoryOf(FindingSubject::Memory::kJob);
    case Who::Kind::kHost:
      return FindingSubject::MemoryOf(FindingSubject::Memory::kHost);
    case Who::Kind::kRank:
      return FindingSubject::Process(who.index, who.pid);
    default:
      return FindingSubject::Gpu(who.index);
  }
}

std::string WordsFor(const Who& who) {
  switch (who.kind) {
    case Who::Kind::kJob:
      return who.anon ? "the job's allocated memory (anonymous PSS of its processes)"
                      : "the job's memory (PSS of its processes)";
    case Who::Kind::kHost:
      return "host memory";
    case Who::Kind::kRank:
      return fmt::format("the {}memory of rank {} (pid {})", who.anon ? "allocated " : "",
                         who.index, who.pid);
    case Who::Kind::kGpuJob:
      return fmt::format("the job's memory on GPU {}", who.index);
    case Who::Kind::kGpuAllocated:
      return fmt::format("the allocator's allocated bytes on GPU {}", who.index);
    case Who::Kind::kGpu:
      return fmt::format("GPU {}", who.index);
  }
  return {};
}

// What a row gives a floor: its lowest sample, else (a row written before
// rows kept one) its mean.
std::optional<double> Lowest(const std::optional<double>& min, const std::optional<double>& mean) {
  return min ? min : mean;
}

int GpuOf(const Who& who) {
  bool gpu = who.kind == Who::Kind::kGpuJob || who.kind == Who::Kind::kGpuAllocated ||
             who.kind == Who::Kind::kGpu;
  return gpu ? who.index : -1;
}

}  // namespace

void MemoryRules::OnMark(const Mark& m, RuleContext& cx) {
  if (m.type != EventType::kEpochBegin || m.pid != cx.run.lowest_rank_pid || !m.epoch) return;
  epoch_now_ = m.epoch;
  ++epochs_begun_;
  if (m.call != call_ || m.planned_epochs != planned_epochs_) call_epoch_begins_.clear();
  call_ = m.call;
  planned_epochs_ = m.planned_epochs;
  call_epoch_begins_.push_back(m.t);
}

std::optional<int64_t> MemoryRules::FloorUnit(const Frame& f) {
  if (epoch_now_) {
    if (!floors_by_epoch_) {  // epochs replace windows: start the floors over
      floors_by_epoch_ = true;
      host_memory_series_.floors.Clear();
      for (auto& [pid, s] : rank_memory_) s.floors.Clear();
      for (auto& [i, g] : gpu_memory_) {
        g.job.floors.Clear(), g.allocated.floors.Clear(), g.reserved.floors.Clear();
      }
    }
    if (epochs_begun_ < 2) return std::nullopt;  // the first epoch is warm-up
    return *epoch_now_;
  }
  double since = f.elapsed_s - th_[Th::kLeakWarmup_s];
  if (since < 0) return std::nullopt;
  double window = std::floor(since / std::max(th_[Th::kLeakWindow_s], 0.001));
  if (!(window < 9e18)) return std::nullopt;  // a time no run reaches (a corrupt row)
  return static_cast<int64_t>(window);
}

std::optional<double> MemoryRules::HostFloorValue(MemorySeries& s, std::optional<double> anon,
                                                  std::optional<double> pss) {
  if (!s.anon) {
    if (!anon && !pss) return std::nullopt;
    s.anon = anon.has_value();
  }
  return *s.anon ? anon : pss;
}

bool MemoryRules::FeedSeries(MemorySeries& s, std::optional<double> value, double t, int64_t unit) {
  if (!value) return false;
  if (!s.floors.Add(t, *value, unit)) return false;
  // Floors within leak_min_growth of each other cannot grow by it: no test.
  const std::vector<Floor>& floors = s.floors.floors();
  auto [low, high] =
      std::minmax_element(floors.begin(), floors.end(),
                          [](const Floor& a, const Floor& b) { return a.value < b.value; });
  if (high->value - low->value < th_[Th::kLeakMinGrowth]) {
    s.trend = FloorTrend{.floors = floors.size()};
    s.leak = false;
    return true;
  }
  s.trend = TrendOf(floors, th_[Th::kLeakPValue], floors_by_epoch_);
  const FloorTrend& tr = s.trend;
  s.leak = tr.floors >= static_cast<size_t>(th_[Th::kLeakMinFloors]) &&
           tr.p_value < th_[Th::kLeakPValue] && tr.slope_per_s > 0 &&
           tr.growth >= th_[Th::kLeakMinGrowth] &&
           tr.recent_slope_per_s >= th_[Th::kLeakPlateauRatio] * tr.slope_per_s;
  if (s.leak) s.leak_trend = tr;
  return true;
}

void MemoryRules::OnFrame(const Frame& f, RuleContext& cx) {
  std::optional<int64_t> unit = FloorUnit(f);
  bool alive = f.job_processes.value_or(1) > 0;
  if (f.job_memory_bytes) cx.Want(FindingId::kHostMemoryLeak);
  if (unit && alive) {
    FeedSeries(host_memory_series_,
               HostFloorValue(host_memory_series_,
                              Lowest(f.job_memory_anon_pss_min_bytes, f.job_memory_anon_pss_bytes),
                              Lowest(f.job_memory_min_bytes, f.job_memory_bytes)),
               f.t, *unit);
    for (const RankFrame& r : f.ranks) {
      rank_of_pid_[r.pid] = r.rank;
      MemorySeries& s = rank_memory_[r.pid];
      FeedSeries(s, HostFloorValue(s, r.memory_anon_pss_bytes, r.memory_bytes), f.t, *unit);
    }
    for (const GpuFrame& g : f.gpus) {
      if (g.job_memory_bytes.value_or(0) > 0) cx.Want(FindingId::kGpuMemoryLeak);
      GpuMemory& m = gpu_memory_[g.index];
      FeedSeries(m.job, Lowest(g.job_memory_min_bytes, g.job_memory_bytes), f.t, *unit);
      FeedSeries(m.allocated, Lowest(g.allocator_allocated_min_bytes, g.allocator_allocated_bytes),
                 f.t, *unit);
      FeedSeries(m.reserved, Lowest(g.allocator_reserved_min_bytes, g.allocator_reserved_bytes),
                 f.t, *unit);
    }
  }

  JudgeLeak(host_memory_series_, FindingId::kHostMemoryLeak,
            {.kind = Who::Kind::kJob, .anon = host_memory_series_.anon.value_or(false)}, f.t, cx);
  // Each training process, when there are several: which rank holds the leak.
  for (auto& [pid, s] : rank_memory_) {
    JudgeLeak(s, FindingId::kHostMemoryLeak,
              {Who::Kind::kRank, rank_of_pid_[pid], pid, s.anon.value_or(false)}, f.t, cx);
  }
  // Room: what the host has available, and under a cgroup limit what is left of it.
  if (f.host_memory_available_bytes) {
    double room = *f.host_memory_available_bytes;
    double limit = f.host_memory_limit_bytes.value_or(room);
    if (f.host_memory_limit_bytes && f.host_cgroup_memory_current_bytes) {
      room = std::min(room, *f.host_memory_limit_bytes - *f.host_cgroup_memory_current_bytes);
    }
    JudgeForecast(host_forecast_, host_memory_series_.leak ? &host_memory_series_ : nullptr,
                  std::max(room, 0.0), limit, {Who::Kind::kHost}, f.t, cx);
  }

  for (const GpuFrame& g : f.gpus) {
    GpuMemory& m = gpu_memory_[g.index];
    // The allocator's own figures say what the tensors hold: a leak is its
    // allocated bytes rising; reserved rising alone is allocator growth, and
    // the device figure rising with it is no leak of the training's tensors.
    bool allocator = g.allocator_allocated_bytes.has_value();
    bool reserved_only = allocator && m.reserved.leak && !m.allocated.leak;
    MemorySeries& judged =
        allocator && (m.allocated.leak || !m.job.leak || reserved_only) ? m.allocated : m.job;
    if (&judged == &m.allocated && m.job.tracker.open()) cx.Due(m.job.tracker, f.t, false, 0);
    if (&judged == &m.job && m.allocated.tracker.open()) {
      cx.Due(m.allocated.tracker, f.t, false, 0);
    }
    JudgeLeak(judged, FindingId::kGpuMemoryLeak,
              {&judged == &m.job ? Who::Kind::kGpuJob : Who::Kind::kGpuAllocated, g.index}, f.t,
              cx);

    bool growth =
        m.reserved.leak && m.allocated.trend.slope_per_s <
                               th_[Th::kAllocatorGrowthShare] * m.reserved.trend.slope_per_s;
    if (cx.Due(m.growth, f.t, growth, 0)) {
      Opening o;
      o.severity = Severity::kWarning;
      o.evidence = EvidenceFromJson(MemoryTrendFiguresJson(TrendRecord(m.reserved)));
      double allocated =
          TrendOf(m.allocated.floors.floors(), INFINITY, floors_by_epoch_).slope_per_s;
      o.evidence["allocated_growth_bytes_per_hour"] = std::round(allocated * 3600);
      o.message = fmt::format(
          "On GPU {} the allocator's reserved memory grows {}/h while its allocated memory "
          "grows {}/h: fragmentation or a growing cache, not the tensors.",
          g.index, FormatBytes(m.reserved.trend.slope_per_s * 3600),
          FormatBytes(std::max(allocated, 0.0) * 3600));
      cx.Open(FindingId::kAllocatorGrowth, m.growth, f.t, SubjectOf({Who::Kind::kGpu, g.index}),
              std::move(o));
    }

    // What fills the device: the tensors (with allocator figures), else the
    // job's memory. An allocator that only reserves more frees its cache and
    // retries before it fails.
    const MemorySeries& filling = allocator ? m.allocated : m.job;
    const MemorySeries* leaking = filling.leak ? &filling : nullptr;
    if (g.memory_total_bytes && g.memory_used_bytes) {
      JudgeForecast(m.forecast, leaking,
                    std::max(*g.memory_total_bytes - *g.memory_used_bytes, 0.0),
                    *g.memory_total_bytes, {Who::Kind::kGpu, g.index}, f.t, cx);
    }
  }
}

void MemoryRules::JudgeLeak(MemorySeries& s, FindingId id, MemoryWho who, double t,
                            RuleContext& cx) {
  if (s.trend.floors >= static_cast<size_t>(th_[Th::kLeakMinFloors])) cx.Judging(id);
  if (!cx.Due(s.tracker, t, s.leak, 0)) return;
  Opening o;
  o.severity = Severity::kWarning;
  o.evidence = EvidenceFromJson(MemoryTrendFiguresJson(TrendRecord(s)));
  std::string per_epoch = floors_by_epoch_
                              ? fmt::format("{}/epoch, ", FormatBytes(s.trend.slope_per_unit))
                              : std::string();
  o.message =
      fmt::format("{} grows {}{}/h (over {} {}, confidence {}): memory is held and not given back.",
                  WordsFor(who), per_epoch, FormatBytes(s.trend.slope_per_s * 3600), s.trend.floors,
                  floors_by_epoch_ ? "epochs" : "windows", ConfidenceText(s.trend.p_value));
  if (!o.message.empty()) o.message[0] = static_cast<char>(std::toupper(o.message[0]));
  cx.Open(id, s.tracker, t, SubjectOf(who), std::move(o));
  int gpu = GpuOf(who);
  cx.Risk(MemoryRisk{
      .kind = gpu >= 0 ? MemoryRisk::Kind::kGpuMemoryLeak : MemoryRisk::Kind::kHostMemoryLeak,
      .gpu = gpu,
      .growth_bytes_per_second = s.trend.slope_per_s});
}

MemoryRules::Forecast MemoryRules::ForecastOf(const MemorySeries& s, double room, double limit,
                                              double t) const {
  Forecast fc;
  fc.slope_per_s = s.trend.slope_per_s;
  if (floors_by_epoch_) fc.slope_per_epoch = s.trend.slope_per_unit;
  fc.room_bytes = room;
  fc.limit_bytes = limit;
  fc.seconds_left = fc.slope_per_s > 0 ? room / fc.slope_per_s : INFINITY;
  if (!planned_epochs_ || call_epoch_begins_.size() < 2) return fc;
  // Epoch length: the median time from one epoch's begin to the next (its
  // evaluation included).
  std::vector<double> lengths;
  for (size_t i = 1; i < call_epoch_begins_.size(); ++i) {
    lengths.push_back(call_epoch_begins_[i] - call_epoch_begins_[i - 1]);
  }
  double epoch_s = Median(lengths);
  if (epoch_s <= 0) return fc;
  auto position = static_cast<int64_t>(call_epoch_begins_.size());  // 1-based, in the call
  double left_in_epoch = std::max(epoch_s - (t - call_epoch_begins_.back()), 0.0);
  fc.planned_epochs = planned_epochs_;
  fc.run_left_s = left_in_epoch + static_cast<double>(*planned_epochs_ - position) * epoch_s;
  if (std::isfinite(fc.seconds_left)) {
    double after = fc.seconds_left - left_in_epoch;
    double epochs = after <= 0 ? 0 : std::ceil(after / epoch_s);
    // Further than any run goes, the memory runs out in no epoch.
    if (epochs < 1e15) fc.epoch = position + static_cast<int64_t>(epochs);
  }
  return fc;
}

void MemoryRules::JudgeForecast(Tracker& tr, const MemorySeries* leaking, double room, double limit,
                                MemoryWho who, double t, RuleContext& cx) {
  std::optional<Forecast> fc;
  bool cond = false;
  if (leaking) {
    fc = ForecastOf(*leaking, room, limit, t);
    cond = fc->run_left_s ? fc->seconds_left < *fc->run_left_s
                          : fc->seconds_left < th_[Th::kOomHorizon_s];
  }
  if (!cx.Due(tr, t, cond, 0)) return;
  Opening o;
  o.severity = Severity::kCritical;
  o.evidence = {{"growth_bytes_per_hour", std::round(fc->slope_per_s * 3600)}};
  if (fc->slope_per_epoch) o.evidence["growth_bytes_per_epoch"] = std::round(*fc->slope_per_epoch);
  o.evidence["room_bytes"] = std::round(fc->room_bytes);
  o.evidence["limit_bytes"] = std::round(fc->limit_bytes);
  o.evidence["seconds_left"] = std::round(fc->seconds_left);
  if (fc->epoch) o.evidence["oom_epoch"] = *fc->epoch;
  if (fc->planned_epochs) o.evidence["planned_epochs"] = *fc->planned_epochs;
  if (fc->run_left_s) o.evidence["run_left_s"] = std::round(*fc->run_left_s);
  std::string rate = fc->slope_per_epoch
                         ? fmt::format("{}/epoch", FormatBytes(*fc->slope_per_epoch))
                         : fmt::format("{}/h", FormatBytes(fc->slope_per_s * 3600));
  std::string when = fc->epoch && fc->planned_epochs
                         ? fmt::format("at epoch {} of {}, in about {}", *fc->epoch,
                                       *fc->planned_epochs, Span(fc->seconds_left))
                         : fmt::format("in about {}", Span(fc->seconds_left));
  o.message = fmt::format("At +{}, {} runs out {}{}.", rate, WordsFor(who), when,
                          fc->run_left_s ? ", before the run ends" : "");
  cx.Open(FindingId::kOomForecast, tr, t, SubjectOf(who), std::move(o));
  cx.Risk(MemoryRisk{.kind = MemoryRisk::Kind::kOomForecast,
                     .gpu = GpuOf(who),
                     .seconds_left = fc->seconds_left,
                     .epoch = fc->epoch,
                     .planned_epochs = fc->planned_epochs,
                     .growth_bytes_per_second = fc->slope_per_s});
}

MemoryTrendRecord MemoryRules::TrendRecord(const MemorySeries& s) const {
  // A figure that did not rise was not fitted as it was judged: fit it now.
  FloorTrend tr = s.leak_trend     ? *s.leak_trend
                  : s.trend.fitted ? s.trend
                                   : TrendOf(s.floors.floors(), INFINITY, floors_by_epoch_);
  MemoryTrendRecord out;
  out.floors = static_cast<int64_t>(tr.floors);
  out.floors_by_epoch = floors_by_epoch_;
  if (tr.floors < static_cast<size_t>(th_[Th::kLeakMinFloors])) {
    out.verdict = "not enough evidence yet";
    return out;
  }
  out.growth_bytes_per_hour = std::round(tr.slope_per_s * 3600);
  if (floors_by_epoch_) out.growth_bytes_per_epoch = std::round(tr.slope_per_unit);
  out.confidence = Round4(1 - tr.p_value);
  out.verdict = s.leak_trend ? "leak" : "no leak";
  return out;
}

std::vector<MemoryTrendRecord> MemoryRules::Trends() const {
  std::vector<MemoryTrendRecord> out;
  auto add = [&](const MemorySeries& s, const Who& who, const char* figure) {
    if (s.floors.empty()) return;
    MemoryTrendRecord& t = out.emplace_back(TrendRecord(s));
    t.subject = SubjectOf(who);
    t.figure = figure;
  };
  add(host_memory_series_, {Who::Kind::kJob},
      host_memory_series_.anon.value_or(false) ? "job.memory_anon_pss_bytes" : "job.memory_bytes");
  for (const auto& [pid, s] : rank_memory_) {
    add(s, {Who::Kind::kRank, rank_of_pid_.at(pid), pid},
        s.anon.value_or(false) ? "training.ranks[].memory_anon_pss_bytes"
                               : "training.ranks[].memory_bytes");
  }
  for (const auto& [index, m] : gpu_memory_) {
    add(m.job, {Who::Kind::kGpu, index}, "gpus[].job_memory_bytes");
    add(m.allocated, {Who::Kind::kGpu, index}, "gpus[].allocator_allocated_bytes");
    add(m.reserved, {Who::Kind::kGpu, index}, "gpus[].allocator_reserved_bytes");
  }
  return out;
}

}  // namespace tv

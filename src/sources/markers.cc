#include "sources/markers.h"

#include <algorithm>
#include <cctype>

namespace tv {
namespace {

// Datagrams read per tick at most; the rest wait for the next tick.
constexpr int kMaxPerTick = 4096;

}  // namespace

// Lower rank first (a plain process counts as rank 0), then the first to speak.
bool MarkerSource::Precedes(const Process& a, const Process& b) {
  return std::pair(std::max(a.rank, 0), a.order) < std::pair(std::max(b.rank, 0), b.order);
}

namespace {

template <typename T>
void SetMax(std::optional<double>* slot, T v) {
  if (!*slot || static_cast<double>(v) > **slot) *slot = static_cast<double>(v);
}

void AddTo(std::optional<double>* sum, std::optional<double> v) {
  if (v) *sum = sum->value_or(0) + *v;
}

// Whether two UUIDs name the same device: the hex digits compared without
// case, and without the "GPU-"/"MIG-" prefix that NVML writes and a framework
// may leave out.
bool SameUuid(std::string_view a, std::string_view b) {
  auto bare = [](std::string_view s) {
    for (std::string_view prefix : {"GPU-", "MIG-", "gpu-", "mig-"}) {
      if (s.starts_with(prefix)) return s.substr(prefix.size());
    }
    return s;
  };
  a = bare(a);
  b = bare(b);
  return !a.empty() && a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The GPU a framework's device is: the one with its UUID when the framework
// said it (a rank's own CUDA_VISIBLE_DEVICES renumbers devices from 0), else the
// one with its number; nullptr when none is watched.
GpuSample* GpuOf(const AllocatorFigures& f, std::vector<GpuSample>* gpus) {
  for (GpuSample& g : *gpus) {
    if (f.uuid.empty() ? g.index == f.device : SameUuid(g.uuid, f.uuid)) return &g;
  }
  return nullptr;
}

}  // namespace

void MarkerSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  (void)notices;
  TrainingSample& t = out->training;
  Drain(&t);
  if (malformed_ > 0) t.markers_malformed = static_cast<double>(malformed_);
  ReadSlots(tick.mono_s, &t);
  t.phase = CurrentPhase();
  if (const Process* ref = Reference()) {
    if (ref->epoch) t.epoch = static_cast<double>(*ref->epoch);
    t.scalars.assign(ref->scalars.begin(), ref->scalars.end());
  }
  AddAllocatorFigures(out);
}

bool MarkerSource::Flush(Sample* out) {
  TrainingSample& t = out->training;
  t.markers.clear();
  t.phase_changes.clear();
  t.malformed_error.clear();
  Drain(&t);
  // The step counts as the processes left them (a rate needs a later tick).
  t.steps.reset();
  t.step.reset();
  t.ranks.clear();
  ReadSlots(out->mono_s, &t);
  return !t.markers.empty() || !t.malformed_error.empty() || t.steps.has_value();
}

void MarkerSource::Drain(TrainingSample* t) {
  for (int i = 0; i < kMaxPerTick && endpoint_->Receive(&datagram_); ++i) {
    std::string error;
    std::optional<Marker> m = ParseMarker(datagram_, &error);
    if (!m) {
      if (malformed_++ == 0) t->malformed_error = error;
      continue;
    }
    t->markers.push_back(std::move(*m));
  }
  // Each process's messages arrive in order on its own connection, but the
  // connections are read one after another: put them back in the order they
  // were sent, so rank 1's epoch_begin comes before rank 0's epoch_end.
  std::stable_sort(t->markers.begin(), t->markers.end(),
                   [](const Marker& a, const Marker& b) { return a.t < b.t; });
  for (const Marker& m : t->markers) {
    std::string before(CurrentPhase());
    Apply(m);
    std::string_view after = CurrentPhase();
    if (after == before) continue;
    bool began = m.type == MarkerType::kPhaseBegin && after == m.phase;
    t->phase_changes.push_back({m.t, std::string(after), began});
  }
}

void MarkerSource::Apply(const Marker& m) {
  auto [it, fresh] = processes_.try_emplace(std::pair(m.pid, m.slot));
  Process& p = it->second;
  if (fresh) p.order = next_order_++;
  p.rank = m.rank;
  switch (m.type) {
    case MarkerType::kHello:
      p.framework = m.framework;
      p.closed = false;
      break;
    case MarkerType::kEpochBegin:
    case MarkerType::kEpochEnd:
      p.epoch = m.epoch;
      break;
    case MarkerType::kPhaseBegin:
      p.phases.push_back(m.phase);
      break;
    case MarkerType::kPhaseEnd: {
      auto open = std::find(p.phases.rbegin(), p.phases.rend(), m.phase);
      if (open != p.phases.rend()) p.phases.erase(std::next(open).base());
      break;
    }
    case MarkerType::kScalars:
      for (const auto& [name, value] : m.scalars) {
        auto s = std::find_if(p.scalars.begin(), p.scalars.end(),
                              [&](const auto& kv) { return kv.first == name; });
        if (s == p.scalars.end()) {
          p.scalars.emplace_back(name, value);
        } else {
          s->second = value;
        }
      }
      break;
    case MarkerType::kAllocator:
      p.allocator = m.allocator;
      break;
    case MarkerType::kBye:
      p.closed = true;
      p.phases.clear();
      p.allocator.clear();
      break;
  }
}

std::string_view MarkerSource::CurrentPhase() const {
  const Process* best = nullptr;
  for (const auto& [client, p] : processes_) {
    if (!p.phases.empty() && (best == nullptr || Precedes(p, *best))) best = &p;
  }
  return best == nullptr ? std::string_view() : std::string_view(best->phases.back());
}

const MarkerSource::Process* MarkerSource::Reference() const {
  // The lowest rank still running (a plain process counts as rank 0), the
  // first to speak among equals; when all are done, the last state of the same.
  const Process* best = nullptr;
  for (bool want_open : {true, false}) {
    for (const auto& [client, p] : processes_) {
      if (want_open && p.closed) continue;
      if (best == nullptr || Precedes(p, *best)) best = &p;
    }
    if (best != nullptr) return best;
  }
  return nullptr;
}

void MarkerSource::ReadSlots(double mono_s, TrainingSample* out) {
  const StepSlot* slots = endpoint_->slots();
  if (slots_.size() < kStepSlots) slots_.resize(kStepSlots);
  for (uint32_t i = 0; i < kStepSlots; ++i) {
    uint32_t pid = slots[i].pid.load(std::memory_order_acquire);
    if (pid == 0) break;  // claimed in order: the first free slot ends the list
    uint64_t steps = slots[i].steps.load(std::memory_order_relaxed);
    int64_t step = slots[i].step.load(std::memory_order_relaxed);
    SlotState& prev = slots_[i];
    if (prev.pid == pid && prev.mono_s > 0 && mono_s > prev.mono_s && steps >= prev.steps) {
      SetMax(&out->steps_per_second,
             static_cast<double>(steps - prev.steps) / (mono_s - prev.mono_s));
    }
    prev = SlotState{pid, steps, mono_s};
    RankSteps& r = out->ranks.emplace_back();
    r.pid = static_cast<int>(pid);
    r.rank = slots[i].rank.load(std::memory_order_relaxed);
    r.steps = static_cast<double>(steps);
    if (step >= 0) r.step = static_cast<double>(step);
    SetMax(&out->steps, steps);
    if (step >= 0) SetMax(&out->step, step);
  }
}

void MarkerSource::AddAllocatorFigures(Sample* out) const {
  for (const auto& [key, p] : processes_) {
    for (const AllocatorFigures& f : p.allocator) {
      GpuSample* g = GpuOf(f, &out->gpus);
      if (g == nullptr) continue;
      AddTo(&g->allocator_allocated_bytes, f.allocated_bytes);
      AddTo(&g->allocator_reserved_bytes, f.reserved_bytes);
      AddTo(&g->allocator_peak_bytes, f.peak_allocated_bytes);
    }
  }
}

}  // namespace tv

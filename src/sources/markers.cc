#include "sources/markers.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cctype>
#include <climits>

#include "markers/risk.h"

namespace tv {
namespace {

template <typename T>
void SetMax(std::optional<double>* slot, T v) {
  if (!*slot || static_cast<double>(v) > **slot) *slot = static_cast<double>(v);
}

void AddTo(std::optional<double>* sum, std::optional<double> v) {
  if (v) *sum = sum->value_or(0) + *v;
}

// Sets each of `said` in `held` (a new name at the end while `held` has
// fewer than `most`); false when a new name found no room.
bool Update(std::vector<std::pair<std::string, double>>* held,
            const std::vector<std::pair<std::string, double>>& said, size_t most) {
  bool room = true;
  for (const auto& scalar : said) {  // no structured binding: clang 14 cannot capture one
    auto s = std::find_if(held->begin(), held->end(),
                          [&](const auto& kv) { return kv.first == scalar.first; });
    if (s != held->end()) {
      s->second = scalar.second;
    } else if (held->size() < most) {
      held->push_back(scalar);
    } else {
      room = false;
    }
  }
  return room;
}

// The event a marker is in Sample::training; false for scalars and allocator
// figures, which go into rows instead (and an epoch's scalars into its end).
bool ToEvent(const Marker& m, TrainingEvent* e) {
  switch (m.type) {
    case MarkerType::kHello:
      e->type = EventType::kClientStart;
      break;
    case MarkerType::kEpochBegin:
      e->type = EventType::kEpochBegin;
      break;
    case MarkerType::kEpochEnd:
      e->type = EventType::kEpochEnd;
      break;
    case MarkerType::kPhaseBegin:
      e->type = EventType::kPhaseBegin;
      break;
    case MarkerType::kPhaseEnd:
      e->type = EventType::kPhaseEnd;
      break;
    case MarkerType::kBye:
      e->type = EventType::kClientEnd;
      break;
    case MarkerType::kTensorboardLogDir:
      e->type = EventType::kTensorboardLogDir;
      break;
    case MarkerType::kProfile:
      e->type = EventType::kProfile;
      e->profile = ProfileCapture{m.reason, m.id, m.dir, m.steps.value_or(0), m.seconds, {}, {}};
      break;
    case MarkerType::kScalars:
    case MarkerType::kAllocator:
    case MarkerType::kStacks:
    case MarkerType::kRequest:
      return false;
  }
  e->pid = m.pid;
  e->rank = m.rank;
  e->t = m.t;
  e->epoch = m.epoch;
  e->steps = m.steps;
  e->wait_s = m.wait_s;
  e->timed_s = m.timed_s;
  e->call = m.call;
  e->planned_epochs = m.planned_epochs;
  e->phase = m.phase;
  e->framework = m.framework;
  e->exception = m.exception;
  e->log_dir = m.log_dir;
  e->message = m.message;
  return true;
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

// Lower rank first (a plain process counts as rank 0), then the first to speak.
bool MarkerSource::Precedes(const Process& a, const Process& b) {
  return std::pair(std::max(a.rank, 0), a.order) < std::pair(std::max(b.rank, 0), b.order);
}

void MarkerSource::Warn(const char* kind, std::string message) {
  if (std::find(warned_.begin(), warned_.end(), kind) != warned_.end()) return;
  warned_.emplace_back(kind);
  warnings_.push_back(Notice{"markers", std::move(message)});
}

void MarkerSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  TrainingSample& t = out->training;
  if (first_mono_s_ == 0) first_mono_s_ = tick.mono_s;
  last_mono_s_ = tick.mono_s;
  Drain(out->t, &t);
  traces_.Done(&t.events, /*wait=*/false);
  stacks_.Poll(out->t, &t.events);
  if (malformed_ > 0) t.markers_malformed = static_cast<double>(malformed_);
  ReadSlots(tick.mono_s, &t);
  SignalRisk();
  t.phase = CurrentPhase();
  if (const Process* ref = Reference()) {
    if (ref->epoch) t.epoch = static_cast<double>(*ref->epoch);
    t.scalars.assign(ref->scalars.begin(), ref->scalars.end());
  }
  AddAllocatorFigures(out);
  if (uint64_t refused = endpoint_->refused_connections(); refused > 0) {
    Warn("connections", fmt::format("more than {} training processes connected at once: the "
                                    "others are refused (their steps still count)",
                                    MarkerEndpoint::kMaxClients));
  }
  for (Notice& n : warnings_) notices->push_back(std::move(n));
  warnings_.clear();
}

bool MarkerSource::Flush(Sample* out) {
  TrainingSample& t = out->training;
  t.events.clear();
  t.phase_changes.clear();
  t.malformed_error.clear();
  Drain(out->t, &t);
  traces_.Done(&t.events, /*wait=*/true);
  // The step counts as the processes left them (a rate needs a later tick).
  t.steps.reset();
  t.step.reset();
  t.data_wait_ratio.reset();
  t.ranks.clear();
  ReadSlots(out->mono_s, &t);
  return !t.events.empty() || !t.malformed_error.empty() || t.steps.has_value();
}

void MarkerSource::Drain(double now, TrainingSample* t) {
  pending_.clear();
  size_t bytes = 0;
  uint64_t client = 0;
  for (int i = 0;
       i < kMaxPerTick && bytes < kMaxBytesPerTick && endpoint_->Receive(&datagram_, &client);
       ++i) {
    bytes += datagram_.size();
    std::string error;
    std::optional<Marker> m = ParseMarker(datagram_, &error);
    if (!m) {
      if (malformed_++ == 0) t->malformed_error = error;
      continue;
    }
    if (m->type == MarkerType::kRequest) {  // `trainvitals stacks|profile`: no training process
      if (m->what == "stacks") {
        stacks_.Request("request", m->id);
      } else {
        profiles_.Request("request", m->steps.value_or(kDefaultProfileSteps), m->target, m->id);
      }
      continue;
    }
    if (m->type == MarkerType::kStacks) {
      // Only the process at the other end is ever signalled, whatever pid it says.
      int peer = endpoint_->PeerPid(client);
      if (peer == m->pid) stacks_.Offer(peer, m->rank, m->signal);
      continue;
    }
    connections_.try_emplace(client, m->pid, m->slot);
    pending_.push_back(std::move(*m));
  }
  // Each process's messages arrive in order on its own connection, but the
  // connections are read one after another: put them back in the order they
  // were sent, so rank 1's epoch_begin comes before rank 0's epoch_end.
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const Marker& a, const Marker& b) { return a.t < b.t; });
  for (const Marker& m : pending_) {
    std::string before(CurrentPhase());
    if (!Apply(m)) continue;
    TrainingEvent e;
    if (ToEvent(m, &e)) {
      if (m.type == MarkerType::kEpochEnd) {
        auto p = processes_.find(std::pair(m.pid, m.slot));
        if (p != processes_.end()) e.scalars = p->second.epoch_scalars;
      }
      if (e.profile) {
        // Its trace is read off this thread; the event comes at a later tick.
        if (e.profile->seconds) profiles_.Spent(*e.profile->seconds);
        traces_.Start(std::move(e));
      } else {
        t->events.push_back(std::move(e));
      }
    }
    if (m.type == MarkerType::kBye) {
      Retire(m.slot, m.pid);
      stacks_.Forget(m.pid);
    }
    std::string_view after = CurrentPhase();
    if (after == before) continue;
    bool began = m.type == MarkerType::kPhaseBegin && after == m.phase;
    t->phase_changes.push_back({m.t, std::string(after), began});
  }
  hung_up_.clear();
  endpoint_->TakeHangUps(&hung_up_);
  for (uint64_t c : hung_up_) HangUp(c, now, t);
}

void MarkerSource::HangUp(uint64_t client, double now, TrainingSample* t) {
  auto conn = connections_.find(client);
  if (conn == connections_.end()) return;  // it never said anything
  auto [pid, slot] = conn->second;
  connections_.erase(conn);
  auto it = processes_.find(std::pair(pid, slot));
  if (it != processes_.end() && !it->second.closed) {
    // Gone without a goodbye (killed, crashed): it is in no phase any more.
    std::string before(CurrentPhase());
    Process& p = it->second;
    p.closed = true;
    p.phases.Clear();
    p.allocator.clear();
    TrainingEvent& e = t->events.emplace_back();
    e.type = EventType::kClientEnd;
    e.pid = pid;
    e.rank = p.rank;
    e.t = now;
    std::string_view after = CurrentPhase();
    if (after != before) t->phase_changes.push_back({now, std::string(after), false});
  }
  Retire(slot, pid);
  stacks_.Forget(pid);
}

bool MarkerSource::MakeRoom() {
  if (processes_.size() < kMaxProcesses) return true;
  auto oldest = processes_.end();
  for (auto it = processes_.begin(); it != processes_.end(); ++it) {
    if (it->second.closed &&
        (oldest == processes_.end() || it->second.order < oldest->second.order))
      oldest = it;
  }
  if (oldest == processes_.end()) {
    Warn("processes", fmt::format("more than {} training processes at once: markers of the "
                                  "others are ignored",
                                  kMaxProcesses));
    return false;
  }
  processes_.erase(oldest);
  return true;
}

bool MarkerSource::Apply(const Marker& m) {
  // Says nothing of the process's state.
  if (m.type == MarkerType::kTensorboardLogDir) return true;
  auto key = std::pair(m.pid, m.slot);
  auto it = processes_.find(key);
  if (it == processes_.end()) {
    if (!MakeRoom()) return false;
    it = processes_.emplace(key, Process{}).first;
    it->second.order = next_order_++;
  }
  Process& p = it->second;
  p.rank = m.rank;
  switch (m.type) {
    case MarkerType::kHello:
      p.framework = m.framework;
      p.closed = false;
      break;
    case MarkerType::kEpochBegin:
      p.epoch = m.epoch;
      p.epoch_scalars.clear();
      break;
    case MarkerType::kEpochEnd:
      p.epoch = m.epoch;
      break;
    case MarkerType::kPhaseBegin:
      if (!p.phases.Begin(m.phase)) {
        Warn("phases", fmt::format("a process opened more than {} phases without ending them: "
                                   "deeper ones are ignored",
                                   kMaxOpenPhases));
        return false;
      }
      break;
    case MarkerType::kPhaseEnd:
      p.phases.End(m.phase);
      break;
    case MarkerType::kScalars:
      if (bool room = Update(&p.epoch_scalars, m.scalars, kMaxScalars);
          !Update(&p.scalars, m.scalars, kMaxScalars) || !room) {
        Warn("scalars", fmt::format("a process sent more than {} scalar names: new names are "
                                    "ignored",
                                    kMaxScalars));
      }
      break;
    case MarkerType::kAllocator:
      p.allocator = m.allocator;
      break;
    case MarkerType::kBye:
      p.closed = true;
      p.phases.Clear();
      p.allocator.clear();
      break;
    case MarkerType::kTensorboardLogDir:
    case MarkerType::kStacks:
    case MarkerType::kRequest:
    case MarkerType::kProfile:
      break;
  }
  return true;
}

void MarkerSource::Retire(int index, int process) {
  if (index < 0 || index >= static_cast<int>(kStepSlots) || process <= 0) return;
  const StepSlot& slot = endpoint_->slots()[index];
  uint32_t pid = static_cast<uint32_t>(process);
  if (slot.pid.load(std::memory_order_acquire) != pid) return;  // not (or no longer) its slot
  // Its last step came before its goodbye: the slot holds the final count.
  SetMax(&retired_steps_, slot.steps.load(std::memory_order_relaxed));
  int64_t step = slot.step.load(std::memory_order_relaxed);
  if (step >= 0) SetMax(&retired_step_, step);
  if (slots_.size() > static_cast<size_t>(index)) slots_[index] = SlotState{};
  endpoint_->FreeSlot(index, pid);
}

std::string_view MarkerSource::CurrentPhase() const {
  const Process* best = nullptr;
  for (const auto& [client, p] : processes_) {
    if (!p.phases.empty() && (best == nullptr || Precedes(p, *best))) best = &p;
  }
  return best == nullptr ? std::string_view() : best->phases.innermost();
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
  if (retired_steps_) SetMax(&out->steps, *retired_steps_);
  if (retired_step_) SetMax(&out->step, *retired_step_);
  // The slots' wait stamps are CLOCK_MONOTONIC, whatever clock the ticks use.
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  uint64_t now_ns =
      static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(ts.tv_nsec);
  double wait_sum = 0;
  int waiting = 0;
  // Slots are claimed lowest first and freed when a process says goodbye, so
  // free ones may sit between claimed ones: every slot is looked at.
  for (uint32_t i = 0; i < kStepSlots; ++i) {
    uint32_t pid = slots[i].pid.load(std::memory_order_acquire);
    if (pid == 0 || pid > static_cast<uint32_t>(INT_MAX)) continue;
    uint64_t steps = slots[i].steps.load(std::memory_order_relaxed);
    int64_t step = slots[i].step.load(std::memory_order_relaxed);
    SlotState& prev = slots_[i];
    if (prev.pid == pid && prev.mono_s > 0 && mono_s > prev.mono_s && steps >= prev.steps) {
      SetMax(&out->steps_per_second,
             static_cast<double>(steps - prev.steps) / (mono_s - prev.mono_s));
    }
    if (prev.pid != pid) prev.wait.Reset();
    prev.pid = pid;
    prev.steps = steps;
    prev.mono_s = mono_s;
    RankSteps& r = out->ranks.emplace_back();
    r.pid = static_cast<int>(pid);
    r.rank = std::max(slots[i].rank.load(std::memory_order_relaxed), -1);
    r.steps = static_cast<double>(steps);
    if (step >= 0) r.step = static_cast<double>(step);
    r.data_wait_ratio = prev.wait.Update(ReadWait(slots[i]), now_ns);
    if (r.data_wait_ratio) {
      wait_sum += *r.data_wait_ratio;
      ++waiting;
    }
    SetMax(&out->steps, steps);
    if (step >= 0) SetMax(&out->step, step);
  }
  if (waiting > 0) out->data_wait_ratio = wait_sum / waiting;
  steps_per_second_ = out->steps_per_second;
}

bool MarkerSource::RequestProfile(std::string_view finding, int64_t steps, double budget) {
  if (!steps_per_second_ || *steps_per_second_ <= 0) return false;  // not stepping
  return profiles_.RequestFor(finding, steps, 1 / *steps_per_second_, last_mono_s_ - first_mono_s_,
                              budget);
}

void MarkerSource::PublishRisk(const MemoryRisk& risk) {
  std::lock_guard<std::mutex> lock(risk_mu_);
  // After a stop a risk would replace it in the one record, and a process
  // that had not read the stop yet would never see it.
  if (!stop_alert_.empty()) return;
  PublishLocked(risk);
}

void MarkerSource::RequestStop(std::string_view alert) {
  std::lock_guard<std::mutex> lock(risk_mu_);
  if (!stop_alert_.empty()) return;
  stop_alert_ = alert.empty() ? "alert" : std::string(alert);
  MemoryRisk stop;
  stop.kind = MemoryRisk::Kind::kAlertStop;
  PublishLocked(stop);
}

std::string MarkerSource::stop_requested_by() const {
  std::lock_guard<std::mutex> lock(risk_mu_);
  return stop_alert_;
}

void MarkerSource::PublishLocked(const MemoryRisk& risk) {
  WriteRisk(risk, ++risk_seq_, endpoint_->risk_record());
  const StepSlot* slots = endpoint_->slots();
  for (uint32_t i = 0; i < kStepSlots; ++i) {
    if (slots[i].pid.load(std::memory_order_acquire) != 0) {
      endpoint_->SignalRisk(static_cast<int>(i), risk_seq_);
    }
  }
}

void MarkerSource::SignalRisk() {
  std::lock_guard<std::mutex> lock(risk_mu_);
  if (risk_seq_ == 0) return;
  const StepSlot* slots = endpoint_->slots();
  for (uint32_t i = 0; i < kStepSlots; ++i) {
    if (slots[i].pid.load(std::memory_order_acquire) != 0 &&
        slots[i].risk_seq.load(std::memory_order_relaxed) != risk_seq_) {
      endpoint_->SignalRisk(static_cast<int>(i), risk_seq_);
    }
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

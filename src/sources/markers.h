// MarkerSource: reads what the training processes say (markers/protocol.h):
// drains the datagram socket and reads every step slot, each tick. Fills
// Sample::training and the framework allocator's figures of each GPU, so it runs
// after the GPU source. Malformed datagrams are counted and the first one is
// said once; they never stop the run.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/source.h"
#include "markers/endpoint.h"

namespace tv {

class MarkerSource final : public Source {
 public:
  explicit MarkerSource(MarkerEndpoint* endpoint) : endpoint_(endpoint) {}
  std::string_view name() const override { return "markers"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;
  bool Flush(Sample* out) override;

 private:
  // What one training process has said so far.
  struct Process {
    int rank = -1;
    std::string framework;
    std::optional<int64_t> epoch;
    std::vector<std::string> phases;  // open phases, innermost last
    std::vector<std::pair<std::string, double>> scalars;
    std::vector<AllocatorFigures> allocator;
    bool closed = false;
    uint64_t order = 0;  // when it first spoke
  };
  struct SlotState {
    uint32_t pid = 0;
    uint64_t steps = 0;
    double mono_s = 0;
  };
  // Reads the waiting messages into `t.markers`, in send order, and applies them.
  void Drain(TrainingSample* t);
  void Apply(const Marker& m);
  static bool Precedes(const Process& a, const Process& b);
  const Process* Reference() const;
  // The phase the training is in (TrainingSample::phase).
  std::string_view CurrentPhase() const;
  void ReadSlots(double mono_s, TrainingSample* out);
  void AddAllocatorFigures(Sample* out) const;

  MarkerEndpoint* endpoint_;
  std::map<std::pair<int, int>, Process> processes_;  // by (pid, slot): one per client
  std::vector<SlotState> slots_;
  uint64_t malformed_ = 0;
  uint64_t next_order_ = 0;
  std::string datagram_;
};

}  // namespace tv

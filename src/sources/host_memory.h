// Host memory from /proc/meminfo: total, available, used (MemTotal -
// MemAvailable) and swap, converted from kB to bytes.
//
// Thread safety: ParseMemInfo is pure. HostMemorySource is not thread-safe; the
// sampler thread owns it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/source.h"

namespace tv {

// The /proc/meminfo fields trainvitals uses, in bytes. A field that is missing
// (MemAvailable before Linux 3.14), malformed or too large for 64 bits in bytes
// is absent.
struct MemInfo {
  std::optional<uint64_t> mem_total_bytes;
  std::optional<uint64_t> mem_free_bytes;
  std::optional<uint64_t> mem_available_bytes;
  std::optional<uint64_t> swap_total_bytes;
  std::optional<uint64_t> swap_free_bytes;
};

MemInfo ParseMemInfo(std::string_view text);

// Fills host.memory_available_bytes, memory_used_bytes and swap_used_bytes on
// row ticks (and the first tick), memory_total_bytes and swap_total_bytes on
// every tick (as last read: the job's memory share is taken of them). The
// job's own memory, whose peaks matter, is read at every tick from its cgroup
// and its processes. A difference whose operands disagree (available above
// total) is absent. When sampling stops between rows, Flush reads once more:
// the last row's figures.
class HostMemorySource final : public Source {
 public:
  explicit HostMemorySource(Env* env, std::string path = "/proc/meminfo");
  std::string_view name() const override { return "host_memory"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;
  bool Flush(Sample* out) override;

 private:
  Env* env_;
  HeldFile file_;
  std::string buffer_;
  bool noticed_ = false;
  bool read_ = false;    // once: what follows is of the last read
  bool behind_ = false;  // ticks passed since the last read
  std::optional<double> total_bytes_;
  std::optional<double> swap_total_bytes_;
};

}  // namespace tv

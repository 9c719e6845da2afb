// /proc/loadavg: the load averages, taken on row ticks only (the kernel
// updates them every 5 s), and the last PID the host handed out, on every tick
// (host.last_pid: the process sources look for new processes only after it
// moved). The file is one short line, the cheapest sign of a fork the kernel
// gives.
//
// Thread safety: ParseLoadAvg is pure. LoadAverageSource is not thread-safe;
// the sampler thread owns it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/source.h"

namespace tv {

struct LoadAverage {
  double load1 = 0;
  double load5 = 0;
  double load15 = 0;
};

// The first three fields of /proc/loadavg ("0.11 0.13 0.06 1/89 4134"); absent
// when any of them is missing, negative or not a number.
std::optional<LoadAverage> ParseLoadAvg(std::string_view text);
// Its fifth field, the last PID handed out; absent when not a number.
std::optional<uint64_t> ParseLastPid(std::string_view text);

// Fills host.load1, load5 and load15 on row ticks, host.last_pid on every tick.
class LoadAverageSource final : public Source {
 public:
  explicit LoadAverageSource(Env* env, std::string path = "/proc/loadavg");
  std::string_view name() const override { return "load_average"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;

 private:
  Env* env_;
  HeldFile file_;
  std::string buffer_;
  bool noticed_ = false;
};

}  // namespace tv

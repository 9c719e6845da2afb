// CPU package energy from RAPL through the powercap tree
// (/sys/class/powercap/intel-rapl:N/energy_uj; AMD CPUs appear under the same
// names). Only top-level package zones count: subzones (intel-rapl:N:M, core,
// dram) lie inside their package, and psys covers the whole platform.
// energy_uj wraps at max_energy_range_uj; deltas are corrected for one wrap.
//
// Thread safety: the parsing functions are pure. ProbeRapl is safe from any
// thread with a thread-safe Env. RaplSource is not thread-safe; the sampler
// thread owns it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/env.h"
#include "core/source.h"

namespace tv {

// Whether a powercap entry is a top-level RAPL zone: "intel-rapl:N".
bool IsRaplPackageZone(std::string_view entry);

// energy_uj or max_energy_range_uj content, in microjoules.
std::optional<uint64_t> ParseMicrojoules(std::string_view text);

// The energy spent between two readings of a counter that wraps to 0 after
// `max_range_uj`; absent when it went backwards without a known range, or the
// readings lie outside it.
std::optional<uint64_t> EnergyDeltaUj(uint64_t prev_uj, uint64_t cur_uj,
                                      std::optional<uint64_t> max_range_uj);

struct RaplZone {
  std::string name;         // the zone's "name" file ("package-0"); empty if unreadable
  std::string energy_path;  // .../intel-rapl:N/energy_uj
  std::optional<uint64_t> max_energy_range_uj;
};

// What `trainvitals check` shows about RAPL.
struct RaplStatus {
  std::vector<RaplZone> zones;  // package zones found
  bool readable = false;        // every zone's energy_uj could be read
  bool permission_denied = false;
  std::string problem;  // why not readable; empty when readable
};
RaplStatus ProbeRapl(Env* env, const std::string& powercap_dir = "/sys/class/powercap");

// Fills host.cpu_energy_joules (since the source's first read, summed over
// packages) and host.cpu_power_watts (over the last row) on row ticks. When no
// zone exists or one cannot be read at the start it says so once and stays off.
class RaplSource final : public Source {
 public:
  explicit RaplSource(Env* env, std::string powercap_dir = "/sys/class/powercap")
      : env_(env), powercap_dir_(std::move(powercap_dir)) {}
  std::string_view name() const override { return "rapl"; }
  void Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) override;

 private:
  struct Zone {
    RaplZone zone;
    uint64_t prev_uj = 0;
    double prev_mono_s = 0;
  };
  bool Start(const Tick& tick, std::vector<Notice>* notices);

  Env* env_;
  std::string powercap_dir_;
  bool started_ = false;
  bool off_ = false;
  std::vector<Zone> zones_;
  std::string buffer_;
  double energy_uj_ = 0;  // since the first read
};

}  // namespace tv

#include "sources/rapl.h"

#include <algorithm>

#include "sources/text.h"

namespace tv {

bool IsRaplPackageZone(std::string_view entry) {
  constexpr std::string_view kPrefix = "intel-rapl:";
  if (!entry.starts_with(kPrefix)) return false;
  return text::ParseU64(entry.substr(kPrefix.size())).has_value();
}

std::optional<uint64_t> ParseMicrojoules(std::string_view text) {
  return text::ParseU64(text::Trim(text));
}

std::optional<uint64_t> EnergyDeltaUj(uint64_t prev_uj, uint64_t cur_uj,
                                      std::optional<uint64_t> max_range_uj) {
  if (cur_uj >= prev_uj) return cur_uj - prev_uj;
  if (!max_range_uj || prev_uj > *max_range_uj) return std::nullopt;
  return (*max_range_uj - prev_uj) + cur_uj;
}

RaplStatus ProbeRapl(Env* env, const std::string& powercap_dir) {
  RaplStatus status;
  std::vector<std::string> entries;
  env->ListDir(powercap_dir.c_str(), &entries);
  std::sort(entries.begin(), entries.end());
  std::string buf;
  for (const std::string& entry : entries) {
    if (!IsRaplPackageZone(entry)) continue;
    std::string dir = powercap_dir + "/" + entry;
    RaplZone zone;
    if (env->ReadFile((dir + "/name").c_str(), &buf).ok()) zone.name = text::Trim(buf);
    if (zone.name.starts_with("psys")) continue;
    zone.energy_path = dir + "/energy_uj";
    if (env->ReadFile((dir + "/max_energy_range_uj").c_str(), &buf).ok()) {
      zone.max_energy_range_uj = ParseMicrojoules(buf);
    }
    status.zones.push_back(std::move(zone));
  }
  if (status.zones.empty()) {
    status.problem = "no RAPL powercap zones";
    return status;
  }
  for (const RaplZone& zone : status.zones) {
    Status s = env->ReadFile(zone.energy_path.c_str(), &buf);
    if (!s.ok()) {
      status.permission_denied = s.code() == Status::Code::kPermissionDenied;
      status.problem = "RAPL energy not readable: " + s.message();
      if (status.permission_denied) {
        status.problem += " (CPU energy is root-only since Linux 5.10; see docs)";
      }
      return status;
    }
    if (!ParseMicrojoules(buf)) {
      status.problem = "RAPL energy not readable: " + zone.energy_path + ": not a number";
      return status;
    }
  }
  status.readable = true;
  return status;
}

bool RaplSource::Start(const Tick& tick, std::vector<Notice>* notices) {
  RaplStatus status = ProbeRapl(env_, powercap_dir_);
  if (!status.readable) {
    notices->push_back({std::string(name()), status.problem});
    return false;
  }
  for (RaplZone& z : status.zones) {
    if (!env_->ReadFile(z.energy_path.c_str(), &buffer_).ok()) return false;
    std::optional<uint64_t> uj = ParseMicrojoules(buffer_);
    if (!uj) return false;
    zones_.push_back({std::move(z), *uj, tick.mono_s});
  }
  return true;
}

void RaplSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  if (off_) return;
  if (!started_) {
    started_ = true;
    off_ = !Start(tick, notices);
    return;
  }
  if (!tick.row_tick) return;
  double watts = 0;
  bool all = true;
  for (Zone& z : zones_) {
    std::optional<uint64_t> uj;
    if (env_->ReadFile(z.zone.energy_path.c_str(), &buffer_).ok()) uj = ParseMicrojoules(buffer_);
    std::optional<uint64_t> delta;
    if (uj) delta = EnergyDeltaUj(z.prev_uj, *uj, z.zone.max_energy_range_uj);
    double dt = tick.mono_s - z.prev_mono_s;
    if (!uj) {  // a failed read: keep the old reading and try again next row
      all = false;
      continue;
    }
    z.prev_uj = *uj;
    z.prev_mono_s = tick.mono_s;
    if (!delta || dt <= 0) {
      all = false;
      continue;
    }
    energy_uj_ += static_cast<double>(*delta);
    watts += static_cast<double>(*delta) * 1e-6 / dt;
  }
  out->host.cpu_energy_joules = energy_uj_ * 1e-6;
  if (all) out->host.cpu_power_watts = watts;
}

}  // namespace tv

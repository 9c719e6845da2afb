#include "sources/gpu_visible.h"

#include <algorithm>
#include <charconv>

namespace tv {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<int> ParseInt(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// The one device `entry` names, or nullopt when it names none or several.
std::optional<VisibleDevice> Match(std::string_view entry, const std::vector<GpuIdentity>& gpus) {
  if (auto ordinal = ParseInt(entry)) {
    if (*ordinal >= static_cast<int>(gpus.size())) return std::nullopt;
    return VisibleDevice{0, *ordinal, -1};
  }
  std::optional<VisibleDevice> found;
  int matches = 0;
  auto consider = [&](int physical, int mig) {
    ++matches;
    found = VisibleDevice{0, physical, mig};
  };
  if (entry.starts_with("MIG-GPU-")) {  // MIG-GPU-<uuid>/<gi>/<ci>
    std::string_view rest = entry.substr(4);
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    std::string_view gpu = rest.substr(0, slash);
    std::string_view ids = rest.substr(slash + 1);
    auto gi = ParseInt(ids.substr(0, ids.find('/')));
    if (!gi) return std::nullopt;
    for (size_t p = 0; p < gpus.size(); ++p) {
      if (!gpus[p].uuid.starts_with(gpu)) continue;
      for (const auto& m : gpus[p].migs) {
        if (m.gpu_instance == *gi) consider(static_cast<int>(p), m.gpu_instance);
      }
    }
  } else if (entry.starts_with("MIG-")) {
    for (size_t p = 0; p < gpus.size(); ++p) {
      for (const auto& m : gpus[p].migs) {
        if (m.uuid.starts_with(entry)) consider(static_cast<int>(p), m.gpu_instance);
      }
    }
  } else if (entry.starts_with("GPU-")) {
    for (size_t p = 0; p < gpus.size(); ++p) {
      if (gpus[p].uuid.starts_with(entry)) consider(static_cast<int>(p), -1);
    }
  }
  if (matches != 1) return std::nullopt;
  return found;
}

}  // namespace

std::vector<VisibleDevice> ResolveVisibleDevices(std::optional<std::string_view> cvd,
                                                 const std::vector<GpuIdentity>& gpus) {
  std::vector<VisibleDevice> out;
  if (!cvd) {
    for (size_t p = 0; p < gpus.size(); ++p) {
      out.push_back(VisibleDevice{static_cast<int>(p), static_cast<int>(p), -1});
    }
    return out;
  }
  std::string_view rest = *cvd;
  for (;;) {
    size_t comma = rest.find(',');
    auto dev = Match(Trim(rest.substr(0, comma)), gpus);
    if (!dev) break;
    bool repeated = std::any_of(out.begin(), out.end(), [&](const VisibleDevice& d) {
      return d.physical_index == dev->physical_index && d.mig_instance == dev->mig_instance;
    });
    if (repeated) break;
    dev->cuda_index = static_cast<int>(out.size());
    out.push_back(*dev);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

}  // namespace tv

#include "sources/jobs.h"

#include <algorithm>
#include <array>

namespace tv {
namespace {

// One directory of a cgroup path, and where it ends in the path.
struct Part {
  std::string_view name;
  size_t end = 0;
};

std::vector<Part> SplitPath(std::string_view path) {
  std::vector<Part> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t slash = path.find('/', i);
    size_t end = slash == std::string_view::npos ? path.size() : slash;
    if (end > i) parts.push_back({path.substr(i, end - i), end});
    i = end + 1;
  }
  return parts;
}

bool IsHex(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A container id: at least 12 lowercase hex digits.
bool IsContainerId(std::string_view s) { return s.size() >= 12 && IsHex(s); }

std::string_view StripSuffix(std::string_view s, std::string_view suffix) {
  if (s.ends_with(suffix)) s.remove_suffix(suffix.size());
  return s;
}

// The container runtimes' scope names: "<prefix><id>.scope" (systemd driver),
// also without ".scope" (podman's cgroupfs "libpod-<id>").
struct Runtime {
  std::string_view prefix;
  std::string_view kind;
};
constexpr std::array<Runtime, 5> kRuntimes = {{
    {"docker-", "docker"},
    {"libpod-", "podman"},
    {"cri-containerd-", "containerd"},
    {"nerdctl-", "containerd"},
    {"crio-", "crio"},
}};

// The runtime and id of a container's directory; none for anything else
// (a runtime's monitor, "crio-conmon-<id>.scope", is not the container).
std::optional<std::pair<std::string_view, std::string_view>> ContainerOf(std::string_view part) {
  for (const Runtime& r : kRuntimes) {
    if (!part.starts_with(r.prefix)) continue;
    std::string_view id = StripSuffix(part.substr(r.prefix.size()), ".scope");
    if (IsContainerId(id)) return std::pair{r.kind, id};
  }
  return std::nullopt;
}

std::string ShortId(std::string_view id) { return std::string(id.substr(0, 12)); }

std::optional<JobPath> SlurmJob(std::string_view path, const std::vector<Part>& parts) {
  bool under_slurm = false;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view name = parts[i].name;
    if (name.find("slurm") != std::string_view::npos) under_slurm = true;
    if (!under_slurm || !name.starts_with("job_") || !IsDigits(name.substr(4))) continue;
    JobPath job{.kind = "slurm",
                .id = std::string(name.substr(4)),
                .dir = std::string(path.substr(0, parts[i].end))};
    if (i + 1 < parts.size() && parts[i + 1].name.starts_with("step_")) {
      job.step = std::string(parts[i + 1].name.substr(5));
    }
    return job;
  }
  return std::nullopt;
}

// A pod's directory: "pod<uid>" (cgroupfs) or "kubepods[-<qos>]-pod<uid>.slice"
// (systemd, the UID's dashes written as underscores).
std::optional<std::string> PodUid(std::string_view part) {
  if (part.starts_with("pod") && part.size() > 3) return std::string(part.substr(3));
  if (!part.starts_with("kubepods") || !part.ends_with(".slice")) return std::nullopt;
  size_t at = part.find("-pod");
  if (at == std::string_view::npos) return std::nullopt;
  std::string uid(StripSuffix(part.substr(at + 4), ".slice"));
  std::replace(uid.begin(), uid.end(), '_', '-');
  if (uid.empty()) return std::nullopt;
  return uid;
}

std::optional<JobPath> KubernetesJob(std::string_view path, const std::vector<Part>& parts) {
  size_t top = parts.size();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].name.starts_with("kubepods")) {
      top = i;
      break;
    }
  }
  if (top == parts.size()) return std::nullopt;
  for (size_t i = top; i < parts.size(); ++i) {
    std::optional<std::string> uid = PodUid(parts[i].name);
    if (!uid) continue;
    JobPath job{.kind = "kubernetes", .id = *uid, .dir = std::string(path.substr(0, parts[i].end))};
    job.qos = "guaranteed";
    for (size_t q = top; q <= i; ++q) {
      std::string_view name = parts[q].name;
      if (name == "burstable" || name.starts_with("kubepods-burstable")) job.qos = "burstable";
      if (name == "besteffort" || name.starts_with("kubepods-besteffort")) job.qos = "besteffort";
    }
    if (i + 1 < parts.size()) {
      std::string_view next = parts[i + 1].name;
      if (auto container = ContainerOf(next)) {
        job.container_id = std::string(container->second);
      } else if (IsContainerId(next)) {
        job.container_id = std::string(next);
      }
    }
    return job;
  }
  return std::nullopt;
}

std::optional<JobPath> ContainerJob(std::string_view path, const std::vector<Part>& parts) {
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view name = parts[i].name;
    std::optional<std::pair<std::string_view, std::string_view>> container = ContainerOf(name);
    if (!container && name == "docker" && i + 1 < parts.size() &&
        IsContainerId(parts[i + 1].name)) {
      container = std::pair{std::string_view("docker"), parts[i + 1].name};
      ++i;
    }
    if (!container) continue;
    return JobPath{.kind = std::string(container->first),
                   .id = ShortId(container->second),
                   .dir = std::string(path.substr(0, parts[i].end))};
  }
  return std::nullopt;
}

bool IsUnit(std::string_view name) {
  return name.ends_with(".service") || name.ends_with(".scope");
}

// The first unit at or after parts[from], past any slices; parts.size() if none.
size_t FirstUnit(const std::vector<Part>& parts, size_t from) {
  for (size_t i = from; i < parts.size(); ++i) {
    if (IsUnit(parts[i].name)) return i;
    if (!parts[i].name.ends_with(".slice")) break;
  }
  return parts.size();
}

std::optional<JobPath> SystemdJob(std::string_view path, const std::vector<Part>& parts) {
  if (parts.empty() || !parts[0].name.ends_with(".slice")) return std::nullopt;
  if (parts[0].name == "user.slice") {
    if (parts.size() < 3 || !parts[1].name.starts_with("user-")) return std::nullopt;
    std::string_view user = StripSuffix(parts[1].name, ".slice");
    size_t unit = 2;
    // A unit the user's manager started: the first unit under it, else itself.
    if (parts[2].name.starts_with("user@")) {
      size_t inner = FirstUnit(parts, 3);
      if (inner < parts.size()) unit = inner;
    }
    if (!IsUnit(parts[unit].name)) return std::nullopt;
    return JobPath{.kind = "user",
                   .id = std::string(user) + "/" + std::string(parts[unit].name),
                   .dir = std::string(path.substr(0, parts[unit].end))};
  }
  size_t unit = FirstUnit(parts, 1);
  if (unit == parts.size()) return std::nullopt;
  return JobPath{.kind = "systemd",
                 .id = std::string(parts[unit].name),
                 .dir = std::string(path.substr(0, parts[unit].end))};
}

}  // namespace

std::optional<JobPath> JobFromCgroupPath(std::string_view path) {
  std::vector<Part> parts = SplitPath(path);
  if (parts.empty()) return std::nullopt;
  if (auto job = SlurmJob(path, parts)) return job;
  if (auto job = KubernetesJob(path, parts)) return job;
  if (auto job = ContainerJob(path, parts)) return job;
  return SystemdJob(path, parts);
}

std::vector<std::pair<std::string, std::string>> EnvironValues(
    std::string_view environ, const std::vector<std::string_view>& names) {
  std::vector<std::pair<std::string, std::string>> found;
  for (std::string_view name : names) {
    std::string_view rest = environ;
    while (!rest.empty()) {
      size_t nul = rest.find('\0');
      std::string_view entry = rest.substr(0, nul);
      rest = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
      if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=') {
        found.emplace_back(std::string(name), std::string(entry.substr(name.size() + 1)));
        break;
      }
    }
  }
  return found;
}

std::string EnvironValue(const std::vector<std::pair<std::string, std::string>>& env,
                         std::string_view name) {
  for (const auto& [n, v] : env) {
    if (n == name) return v;
  }
  return {};
}

void FillSlurmJobFields(const std::vector<std::pair<std::string, std::string>>& env,
                        JobIdentity* id) {
  if (std::string user = EnvironValue(env, "SLURM_JOB_USER"); !user.empty()) id->user = user;
  id->account = EnvironValue(env, "SLURM_JOB_ACCOUNT");
  id->partition = EnvironValue(env, "SLURM_JOB_PARTITION");
  id->name = EnvironValue(env, "SLURM_JOB_NAME");
}

std::optional<GpuAllocation> AllocatedGpus(
    const std::vector<std::pair<std::string, std::string>>& env) {
  for (std::string_view variable :
       {"SLURM_JOB_GPUS", "NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"}) {
    auto it =
        std::find_if(env.begin(), env.end(), [&](const auto& e) { return e.first == variable; });
    if (it == env.end()) continue;
    std::string_view value = it->second;
    if (value.empty() || value == "all" || value == "none" || value == "void" ||
        value == "NoDevFiles") {
      return std::nullopt;
    }
    GpuAllocation allocation{.variable = std::string(variable), .devices = {}};
    while (!value.empty()) {
      size_t comma = value.find(',');
      std::string_view device = value.substr(0, comma);
      if (!device.empty()) allocation.devices.emplace_back(device);
      value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    }
    return allocation;
  }
  return std::nullopt;
}

const std::vector<std::string_view>& JobEnvironNames() {
  static const std::vector<std::string_view> names = {
      "SLURM_JOB_ID",         "SLURM_JOB_USER", "SLURM_JOB_ACCOUNT",   "SLURM_JOB_PARTITION",
      "SLURM_JOB_NAME",       "SLURM_JOB_GPUS", "TORCHELASTIC_RUN_ID", "NVIDIA_VISIBLE_DEVICES",
      "CUDA_VISIBLE_DEVICES", "HOSTNAME",       "TRAINVITALS_JOB_ID",  "POD_NAMESPACE",
  };
  return names;
}

}  // namespace tv

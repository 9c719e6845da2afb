#include "sources/machine_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/format.h"
#include "core/host.h"
#include "sources/cgroup.h"
#include "sources/gpu_probe.h"
#include "sources/host_memory.h"
#include "sources/rapl.h"

namespace tv {
namespace {

nlohmann::ordered_json OrNull(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
}

nlohmann::ordered_json CgroupJson(const std::optional<CgroupDir>& dir) {
  if (!dir) return nullptr;
  return {{"version", dir->version}, {"dir", dir->dir}};
}

std::string FormatGpuCheck(const nlohmann::ordered_json& g) {
  const auto& nvml = g["nvml"];
  if (!nvml.value("usable", false)) {
    return fmt::format("  GPUs          none: {}\n",
                       nvml.value("error", std::string("NVML not usable")));
  }
  std::string out = fmt::format("  GPUs          NVIDIA driver {}, NVML {} ({})\n",
                                g.value("driver_version", "?"), g.value("nvml_version", "?"),
                                nvml.value("library", ""));
  for (const auto& gpu : g.value("gpus", nlohmann::ordered_json::array())) {
    std::vector<std::string> ok, missing;
    const nlohmann::ordered_json supports = gpu.value("supports", nlohmann::ordered_json::object());
    for (const auto& [group, verdict] : supports.items()) {
      (verdict == "ok" ? ok : missing)
          .push_back(verdict == "ok" ? group
                                     : fmt::format("{} ({})", group, verdict.get<std::string>()));
    }
    std::string name = gpu.value("name", "GPU");
    out += fmt::format("  {:<14}{}", fmt::format("GPU{}", gpu.value("index", 0)), name);
    if (gpu.contains("mig_instance") && gpu["mig_instance"].get<int>() >= 0) {
      out += fmt::format(" MIG {}", gpu["mig_instance"].get<int>());
    }
    if (gpu.contains("memory_total_bytes") && gpu["memory_total_bytes"].is_number()) {
      out += fmt::format(", {}", FormatBytes(gpu["memory_total_bytes"].get<double>()));
    }
    out += fmt::format("\n                reads: {}\n", fmt::join(ok, ", "));
    if (!missing.empty())
      out += fmt::format("                lacks: {}\n", fmt::join(missing, ", "));
  }
  return out;
}

}  // namespace

nlohmann::ordered_json CheckMachine(Env* env) {
  nlohmann::ordered_json j;
  utsname uts{};
  ::uname(&uts);
  j["trainvitals_version"] = TRAINVITALS_VERSION;
  j["host"] = HostName();
  j["kernel"] = fmt::format("{} {}", uts.sysname, uts.release);
  j["cpus_online"] = ::sysconf(_SC_NPROCESSORS_ONLN);
  std::string text;
  if (env->ReadFile("/proc/meminfo", &text).ok()) {
    MemInfo mem = ParseMemInfo(text);
    if (mem.mem_total_bytes) j["memory_total_bytes"] = *mem.mem_total_bytes;
  }

  std::string children = fmt::format("/proc/{}/task/{}/children", ::getpid(), ::getpid());
  Status s = env->ReadFile(children.c_str(), &text);
  j["process_tree"] = {{"children_files", s.ok()},
                       {"problem", s.ok() ? ""
                                          : s.message() + " (kernel without CONFIG_PROC_CHILDREN: "
                                                          "only the root process is followed)"}};

  CgroupLimits limits = ReadCgroupLimits(env, 0);
  j["cgroup"] = {
      {"memory", CgroupJson(limits.memory)},
      {"memory_limit_bytes", OrNull(limits.memory_limit_bytes)},
      {"memory_current_bytes", OrNull(limits.memory_current_bytes)},
      {"cpu", CgroupJson(limits.cpu)},
      {"cpu_limit_cores", OrNull(limits.cpu_limit_cores)},
  };

  RaplStatus rapl = ProbeRapl(env);
  nlohmann::ordered_json zones = nlohmann::ordered_json::array();
  for (const RaplZone& z : rapl.zones) zones.push_back(z.name.empty() ? z.energy_path : z.name);
  j["rapl"] = {{"readable", rapl.readable}, {"zones", zones}, {"problem", rapl.problem}};
  j["gpu"] = ProbeGpus(GpuSourceOptions::FromEnvironment());
  return j;
}

std::string FormatMachineCheck(const nlohmann::ordered_json& j) {
  std::string out = fmt::format("trainvitals {} on {} ({})\n", j.value("trainvitals_version", ""),
                                j.value("host", ""), j.value("kernel", ""));
  out += fmt::format("  CPU           {} online", j.value("cpus_online", 0));
  const auto& cg = j["cgroup"];
  if (cg["cpu_limit_cores"].is_number()) {
    out += fmt::format("; cgroup limit {:.2f} cores", cg["cpu_limit_cores"].get<double>());
  } else {
    out += "; no cgroup CPU limit";
  }
  out += "\n";
  out += "  Memory        ";
  if (j.contains("memory_total_bytes")) out += FormatBytes(j["memory_total_bytes"].get<double>());
  if (cg["memory_limit_bytes"].is_number()) {
    out += fmt::format("; cgroup limit {}", FormatBytes(cg["memory_limit_bytes"].get<double>()));
  } else {
    out += "; no cgroup memory limit";
  }
  if (cg["memory"].is_object()) {
    out += fmt::format(" (cgroup v{} {})", cg["memory"]["version"].get<int>(),
                       cg["memory"]["dir"].get<std::string>());
  }
  out += "\n";
  const auto& tree = j["process_tree"];
  out += tree["children_files"].get<bool>()
             ? "  Process tree  followed through /proc/PID/task/TID/children\n"
             : fmt::format("  Process tree  limited: {}\n", tree["problem"].get<std::string>());
  const auto& rapl = j["rapl"];
  if (rapl["readable"].get<bool>()) {
    out += fmt::format("  CPU energy    RAPL, {} package zone(s)\n", rapl["zones"].size());
  } else {
    out += fmt::format("  CPU energy    not available: {}\n", rapl["problem"].get<std::string>());
  }
  out += FormatGpuCheck(j["gpu"]);
  return out;
}

}  // namespace tv

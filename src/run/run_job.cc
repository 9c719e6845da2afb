#include "run/run_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <limits>

#include "sources/jobs.h"
#include "sources/proc_pid_parse.h"
#include "sources/text.h"

namespace tv {
namespace {

// The last part of a path ("/usr/bin/python3" -> "python3").
std::string_view ProgramName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// "python", "python3", "python3.12".
bool IsPythonName(std::string_view name) {
  if (!name.starts_with("python")) return false;
  name.remove_prefix(6);
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

// Python's own options that take the next word as their value.
bool PythonOptionTakesValue(std::string_view option) {
  return option == "-W" || option == "-X" || option == "--check-hash-based-pycs";
}

// Where the launcher's options begin in `argv`, when it starts one; 0: none.
size_t LauncherOptionsAt(const std::vector<std::string>& argv) {
  if (argv.empty()) return 0;
  std::string_view program = ProgramName(argv[0]);
  if (program == "torchrun") return 1;
  if (!IsPythonName(program)) return 0;
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view word = argv[i];
    std::string_view module;
    size_t next = i + 1;
    if (word == "-m" && i + 1 < argv.size()) {
      module = argv[i + 1];
      next = i + 2;
    } else if (word.starts_with("-m") && word.size() > 2) {
      module = word.substr(2);  // "-mtorch.distributed.run"
    } else if (word.starts_with("-c") || !word.starts_with("-") || word == "-") {
      return 0;  // a command, a script or stdin: no launcher
    } else {
      if (PythonOptionTakesValue(word)) ++i;
      continue;
    }
    return module == "torch.distributed.run" || module == "torch.distributed.launch" ? next : 0;
  }
  return 0;
}

// torchrun's options that take no value ("--no_python" spelled as
// "--no-python"); every other option takes one.
constexpr std::array<std::string_view, 7> kLauncherSwitches = {
    "--standalone", "--no-python",          "--module",  "-m",
    "--run-path",   "--virtual-local-rank", "--use-env",
};

std::optional<int> NodeRankFrom(std::string_view text) {
  std::optional<uint64_t> v = text::ParseU64(text::Trim(text));
  if (!v || *v > static_cast<uint64_t>(std::numeric_limits<int>::max())) return std::nullopt;
  return static_cast<int>(*v);
}

// Whether a run id names a run: torchrun writes "none" when given none.
bool IsElasticRunId(const std::string& value) { return !value.empty() && value != "none"; }

// The torchelastic run id: TORCHELASTIC_RUN_ID, else the launcher's --rdzv-id.
std::string ElasticRunId(const EnvironPairs& env, const std::optional<LauncherArgs>& launcher) {
  if (std::string id = EnvironValue(env, "TORCHELASTIC_RUN_ID"); IsElasticRunId(id)) return id;
  if (launcher && IsElasticRunId(launcher->rdzv_id)) return launcher->rdzv_id;
  return {};
}

// The rendezvous as ADDR:PORT: MASTER_ADDR and MASTER_PORT, else the
// launcher's --rdzv-endpoint, else its --master-addr and --master-port.
std::string RendezvousOf(const EnvironPairs& env, const std::optional<LauncherArgs>& launcher) {
  std::string addr = EnvironValue(env, "MASTER_ADDR");
  std::string port = EnvironValue(env, "MASTER_PORT");
  if (!addr.empty() && !port.empty()) return addr + ":" + port;
  if (!launcher) return {};
  if (!launcher->rdzv_endpoint.empty()) return launcher->rdzv_endpoint;
  if (!launcher->master_addr.empty() && !launcher->master_port.empty()) {
    return launcher->master_addr + ":" + launcher->master_port;
  }
  return {};
}

std::optional<int> NodeRankOf(const EnvironPairs& env,
                              const std::optional<LauncherArgs>& launcher) {
  if (launcher && launcher->node_rank) return launcher->node_rank;
  for (std::string_view name : {"GROUP_RANK", "SLURM_NODEID"}) {
    if (std::optional<int> rank = NodeRankFrom(EnvironValue(env, name))) return rank;
  }
  return std::nullopt;
}

}  // namespace

std::optional<LauncherArgs> TorchrunArgs(const std::vector<std::string>& argv) {
  size_t at = LauncherOptionsAt(argv);
  if (at == 0) return std::nullopt;
  LauncherArgs args;
  bool standalone = false;
  for (size_t i = at; i < argv.size(); ++i) {
    std::string_view word = argv[i];
    if (word == "--" || !word.starts_with("-")) break;  // the training script
    std::string option(word.substr(0, word.find('=')));
    std::replace(option.begin(), option.end(), '_', '-');
    std::string value;
    if (size_t eq = word.find('='); eq != std::string_view::npos) {
      value = word.substr(eq + 1);
    } else if (std::find(kLauncherSwitches.begin(), kLauncherSwitches.end(), option) ==
               kLauncherSwitches.end()) {
      if (i + 1 < argv.size()) value = argv[++i];
    }
    if (option == "--standalone") standalone = true;
    if (option == "--rdzv-id") args.rdzv_id = value;
    if (option == "--rdzv-endpoint") args.rdzv_endpoint = value;
    if (option == "--master-addr") args.master_addr = value;
    if (option == "--master-port") args.master_port = value;
    if (option == "--node-rank") args.node_rank = NodeRankFrom(value);
  }
  if (standalone) {
    args.rdzv_id.clear();
    args.rdzv_endpoint.clear();
  }
  return args;
}

std::string UtcMinute(double t) {
  auto seconds = static_cast<std::time_t>(std::floor(t));
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min);
}

std::optional<JobIdentity> DeriveRunJob(const RunJobInput& in) {
  std::optional<LauncherArgs> launcher = TorchrunArgs(in.command);
  JobIdentity id;
  if (!in.given.empty()) {
    id.job = in.given;
    id.kind = "given";
  } else if (std::string slurm = EnvironValue(in.env, "SLURM_JOB_ID"); !slurm.empty()) {
    id.job = slurm;
    id.kind = "slurm";
    FillSlurmJobFields(in.env, &id);
  } else if (std::string run_id = ElasticRunId(in.env, launcher); !run_id.empty()) {
    id.job = run_id;
    id.kind = "torchelastic";
  } else if (std::string rendezvous = RendezvousOf(in.env, launcher); !rendezvous.empty()) {
    id.job = rendezvous + "@" + UtcMinute(in.start_t);
    id.kind = "rendezvous";
  } else {
    return std::nullopt;
  }
  id.node_rank = NodeRankOf(in.env, launcher);
  return id;
}

const std::vector<std::string_view>& RunJobEnvironNames() {
  static const std::vector<std::string_view> names = {
      "SLURM_JOB_ID",   "SLURM_JOB_USER", "SLURM_JOB_ACCOUNT",   "SLURM_JOB_PARTITION",
      "SLURM_JOB_NAME", "SLURM_NODEID",   "TORCHELASTIC_RUN_ID", "MASTER_ADDR",
      "MASTER_PORT",    "GROUP_RANK",
  };
  return names;
}

EnvironPairs SessionEnviron(std::string_view mode, int root_pid, Env* env) {
  EnvironPairs out;
  if (mode == "attach") {
    std::string text;
    if (!env->ReadFile(ProcPidFile(root_pid, "environ").c_str(), &text).ok()) return out;
    return EnvironValues(text, RunJobEnvironNames());
  }
  for (std::string_view name : RunJobEnvironNames()) {
    if (const char* value = std::getenv(std::string(name).c_str()); value != nullptr) {
      out.emplace_back(name, value);
    }
  }
  return out;
}

}  // namespace tv

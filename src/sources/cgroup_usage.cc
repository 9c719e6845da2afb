#include "sources/cgroup_usage.h"

#include <unistd.h>

#include <algorithm>
#include <tuple>

#include "sources/cgroup.h"
#include "sources/mountinfo.h"
#include "sources/proc_pid_parse.h"
#include "sources/text.h"

namespace tv {
namespace {

// The value after `key` on its line of a "key value" file.
std::optional<uint64_t> KeyValue(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    std::string_view line = text::NextLine(&text);
    if (text::NextField(&line) == key) return text::ParseU64(text::Trim(line));
  }
  return std::nullopt;
}

std::optional<uint64_t> ParseWhole(std::string_view text) {
  return text::ParseU64(text::Trim(text));
}

uint64_t Mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Whether `pid` is `root` or descends from it (its parents read from /proc).
bool InTreeOf(Env* env, int pid, int root, std::string* buffer) {
  for (int hops = 0; hops < 256 && pid > 1; ++hops) {
    if (pid == root) return true;
    if (!env->ReadFile(("/proc/" + std::to_string(pid) + "/stat").c_str(), buffer).ok()) break;
    std::optional<ProcStat> st = ParseProcStat(*buffer);
    if (!st) break;
    pid = st->ppid;
  }
  return pid == root;
}

// "" when every process listed in `procs` is of the tree of `root` and
// `root` is among them; else why not.
std::string NotAlone(Env* env, std::string_view procs, int root, std::string* buffer) {
  bool listed = false;
  int self = static_cast<int>(::getpid());
  std::string why;
  ForEachProc(procs, [&](int pid) {
    listed = listed || pid == root;
    if (!why.empty()) return;
    if (pid == self) {
      why = "trainvitals itself is in it";
    } else if (!InTreeOf(env, pid, root, buffer)) {
      why = "it holds process " + std::to_string(pid) + ", which is not the job's";
    }
  });
  if (!why.empty()) return why;
  return listed ? "" : "its directory is not visible here";
}

}  // namespace

JobCgroupView ExistingJobCgroup(Env* env, int pid) {
  JobCgroupView view;
  std::string mountinfo;
  std::string cgroup;
  if (!env->ReadFile("/proc/self/mountinfo", &mountinfo).ok() ||
      !env->ReadFile(("/proc/" + std::to_string(pid) + "/cgroup").c_str(), &cgroup).ok()) {
    view.why_not = "its cgroup cannot be read";
    return view;
  }
  std::vector<MountInfo> mounts = ParseMountInfo(mountinfo);
  std::vector<ProcCgroupLine> lines = ParseProcCgroup(cgroup);
  std::string procs;
  std::string buffer;
  for (auto [version, controller, dir] :
       {std::tuple{2, "", &view.dirs.unified}, std::tuple{1, "cpuacct", &view.dirs.cpuacct},
        std::tuple{1, "memory", &view.dirs.memory}}) {
    std::optional<CgroupDir> d = ResolveCgroupDirIn(version, mounts, lines, controller);
    if (!d || !env->ReadFile((d->dir + "/cgroup.procs").c_str(), &procs).ok()) continue;
    std::string why = NotAlone(env, procs, pid, &buffer);
    if (why.empty()) {
      *dir = d->dir;
    } else if (view.why_not.empty()) {
      view.why_not = "the job is not alone in its cgroup " + d->dir + ": " + why;
    }
  }
  if (view.dirs.empty() && view.why_not.empty()) view.why_not = "no cgroup is mounted for it";
  if (!view.dirs.empty()) view.why_not.clear();
  return view;
}

std::optional<uint64_t> ParseCpuStatUsage(std::string_view cpu_stat) {
  return KeyValue(cpu_stat, "usage_usec");
}

MemorySplit ParseMemoryStat(std::string_view text, int version) {
  auto bytes = [](std::optional<uint64_t> v) -> std::optional<double> {
    if (!v) return std::nullopt;
    return static_cast<double>(*v);
  };
  bool v2 = version == 2;
  return {bytes(KeyValue(text, v2 ? "anon" : "total_rss")),
          bytes(KeyValue(text, v2 ? "file" : "total_cache")),
          bytes(KeyValue(text, v2 ? "inactive_file" : "total_inactive_file"))};
}

std::optional<uint64_t> ParsePressureSome(std::string_view text) {
  while (!text.empty()) {
    std::string_view line = text::NextLine(&text);
    if (text::NextField(&line) != "some") continue;
    while (!line.empty()) {
      std::string_view field = text::NextField(&line);
      if (field.starts_with("total=")) return text::ParseU64(field.substr(6));
    }
  }
  return std::nullopt;
}

uint64_t ProcsDigest(std::string_view procs) {
  // Order-free: cgroup v2 lists a cgroup's processes in no set order.
  uint64_t digest = 0;
  uint64_t count = 0;
  ForEachProc(procs, [&](int pid) {
    digest += Mix(static_cast<uint64_t>(pid));
    ++count;
  });
  return digest ^ Mix(count);
}

std::optional<double> CgroupUsageSource::Counter::Rate(
    Env* env, double now_s, std::string* buffer,
    std::optional<uint64_t> (*parse)(std::string_view)) {
  std::optional<uint64_t> v;
  if (file.Read(env, buffer).ok()) v = parse(*buffer);
  std::optional<double> rate;
  if (v && last && *v >= *last && now_s > last_s) {
    rate = static_cast<double>(*v - *last) / per_second_unit / (now_s - last_s);
  }
  last = v;
  last_s = now_s;
  return rate;
}

CgroupUsageSource::CgroupUsageSource(Env* env, JobCgroupDirs dirs, bool working_set)
    : env_(env), dirs_(std::move(dirs)) {
  auto has = [&](const std::string& dir, std::string_view file) {
    return !dir.empty() && env_->ReadFile((dir + "/" + std::string(file)).c_str(), &buffer_).ok();
  };
  // cpuacct.usage, where v1 has it, is one number where cpu.stat has several.
  if (has(dirs_.cpuacct, "cpuacct.usage")) {
    cpu_.emplace(Counter{HeldFile(dirs_.cpuacct + "/cpuacct.usage"), 1e9});
    cpu_version_ = 1;
  } else if (has(dirs_.unified, "cpu.stat") && ParseCpuStatUsage(buffer_)) {
    cpu_.emplace(Counter{HeldFile(dirs_.unified + "/cpu.stat"), 1e6});
    cpu_version_ = 2;
  }
  if (has(dirs_.unified, "memory.stat")) {
    memory_stat_.emplace(dirs_.unified + "/memory.stat");
    memory_version_ = 2;
  } else if (has(dirs_.memory, "memory.stat")) {
    memory_stat_.emplace(dirs_.memory + "/memory.stat");
    memory_version_ = 1;
  }
  if (working_set && memory_stat_) {
    memory_current_.emplace(memory_version_ == 2 ? dirs_.unified + "/memory.current"
                                                 : dirs_.memory + "/memory.usage_in_bytes");
  }
  for (auto [file, field] : {std::pair{"cpu.pressure", &JobSample::cpu_pressure_ratio},
                             std::pair{"memory.pressure", &JobSample::memory_pressure_ratio},
                             std::pair{"io.pressure", &JobSample::io_pressure_ratio}}) {
    if (has(dirs_.unified, file) && ParsePressureSome(buffer_)) {
      pressure_.emplace_back(Counter{HeldFile(dirs_.unified + "/" + file), 1e6}, field);
    }
  }
  for (const std::string* dir : {&dirs_.unified, &dirs_.cpuacct, &dirs_.memory}) {
    if (has(*dir, "cgroup.procs")) {
      procs_.emplace(*dir + "/cgroup.procs");
      break;
    }
  }
}

void CgroupUsageSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  JobSample& job = out->job;
  if (!said_) {
    said_ = true;
    if (!cpu_ || !memory_stat_ || pressure_.empty()) {
      std::string missing;
      auto add = [&](bool absent, std::string_view what) {
        if (!absent) return;
        if (!missing.empty()) missing += ", ";
        missing += what;
      };
      add(!cpu_, "CPU time (cpu.stat, cpuacct.usage)");
      add(!memory_stat_, "anon/file memory split (memory.stat)");
      add(pressure_.empty(), "pressure (PSI: *.pressure)");
      notices->push_back({std::string(name()),
                          "no " + missing + (cpu_ ? "" : ": job CPU comes from its processes")});
    }
  }
  if (cpu_) {
    auto parse = cpu_version_ == 2 ? &ParseCpuStatUsage : &ParseWhole;
    job.cpu_cores = cpu_->Rate(env_, tick.mono_s, &buffer_, parse);
  }
  if (tick.row_tick && memory_stat_ && memory_stat_->Read(env_, &buffer_).ok()) {
    MemorySplit split = ParseMemoryStat(buffer_, memory_version_);
    job.memory_anon_bytes = split.anon_bytes;
    job.memory_file_bytes = split.file_bytes;
    std::optional<uint64_t> current;
    if (memory_current_ && memory_current_->Read(env_, &buffer_).ok())
      current = ParseWhole(buffer_);
    if (current && split.inactive_file_bytes) {
      job.memory_bytes = std::max(0.0, static_cast<double>(*current) - *split.inactive_file_bytes);
    }
  }
  // Stall totals: their share over the row is the row's mean, read once.
  for (auto& [counter, field] : pressure_) {
    if (tick.row_tick) job.*field = counter.Rate(env_, tick.mono_s, &buffer_, &ParsePressureSome);
  }
  // Its processes again only when something on the host forked since the last
  // tick (host.last_pid, from the load average source earlier in the tick), and on rows: an exit
  // alone is seen at the next row.
  const std::optional<uint64_t>& forks = out->host.last_pid;
  bool forked = !forks || !last_forks_ || *forks != *last_forks_;
  last_forks_ = forks;
  if (procs_ && (forked || tick.row_tick || !digest_)) {
    digest_.reset();
    if (procs_->Read(env_, &buffer_).ok()) digest_ = ProcsDigest(buffer_);
  }
  job.cgroup_procs_digest = digest_;
}

}  // namespace tv

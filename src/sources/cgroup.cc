#include "sources/cgroup.h"

#include <algorithm>

#include "sources/proc_pid_parse.h"
#include "sources/text.h"

namespace tv {
namespace {

void Lower(std::optional<double>* target, const std::optional<double>& limit) {
  if (limit) *target = *target ? std::min(**target, *limit) : *limit;
}

enum class LimitKind { kMemory, kCpuMax, kCfsQuota };

// The tightest limit over the levels whose files read and parse. `period` pairs
// with `files` for kCfsQuota only.
std::optional<double> Tightest(Env* env, LimitKind kind, const std::vector<std::string>& files,
                               const std::vector<std::string>& period, std::string* buf,
                               std::string* period_buf) {
  std::optional<double> best;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!env->ReadFile(files[i].c_str(), buf).ok()) continue;
    ParsedLimit p;
    switch (kind) {
      case LimitKind::kMemory:
        p = ParseMemoryLimit(*buf);
        break;
      case LimitKind::kCpuMax:
        p = ParseCpuMax(*buf);
        break;
      case LimitKind::kCfsQuota:
        if (i >= period.size() || !env->ReadFile(period[i].c_str(), period_buf).ok()) continue;
        p = ParseCfsQuota(*buf, *period_buf);
        break;
    }
    if (p.ok) Lower(&best, p.limit);
  }
  return best;
}

std::optional<double> MemoryLimit(Env* env, const CgroupFiles& f, std::string* buf) {
  return Tightest(env, LimitKind::kMemory, f.memory_limit, {}, buf, nullptr);
}

std::optional<double> CpuLimit(Env* env, const CgroupFiles& f, std::string* buf,
                               std::string* period_buf) {
  if (!f.cpu) return std::nullopt;
  LimitKind kind = f.cpu->version == 2 ? LimitKind::kCpuMax : LimitKind::kCfsQuota;
  return Tightest(env, kind, f.cpu_quota, f.cpu_period, buf, period_buf);
}

}  // namespace

std::vector<ProcCgroupLine> ParseProcCgroup(std::string_view text) {
  std::vector<ProcCgroupLine> out;
  while (!text.empty()) {
    std::string_view line = text::Trim(text::NextLine(&text));
    size_t a = line.find(':');
    if (a == std::string_view::npos) continue;
    size_t b = line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    std::optional<uint64_t> id = text::ParseU64(line.substr(0, a));
    std::string_view path = line.substr(b + 1);  // a path may itself hold ':'
    if (!id || !path.starts_with('/')) continue;
    out.push_back({*id, std::string(line.substr(a + 1, b - a - 1)), std::string(path)});
  }
  return out;
}

ParsedLimit ParseMemoryLimit(std::string_view text) {
  text = text::Trim(text);
  if (text == "max") return {true, std::nullopt};
  std::optional<uint64_t> v = text::ParseU64(text);
  if (!v) return {};
  if (*v >= kCgroupUnlimitedFloor) return {true, std::nullopt};
  return {true, static_cast<double>(*v)};
}

ParsedLimit ParseCpuMax(std::string_view text) {
  std::string_view quota = text::NextField(&text);
  std::string_view period = text::NextField(&text);
  if (quota == "max") return {true, std::nullopt};
  std::optional<uint64_t> q = text::ParseU64(quota);
  std::optional<uint64_t> p = text::ParseU64(period);
  if (!q || !p || *p == 0 || *q == 0) return {};
  return {true, static_cast<double>(*q) / static_cast<double>(*p)};
}

ParsedLimit ParseCfsQuota(std::string_view quota, std::string_view period) {
  std::optional<int64_t> q = text::ParseI64(text::Trim(quota));
  if (!q) return {};
  if (*q < 0) return {true, std::nullopt};  // -1: no quota
  std::optional<uint64_t> p = text::ParseU64(text::Trim(period));
  if (!p || *p == 0 || *q == 0) return {};
  return {true, static_cast<double>(*q) / static_cast<double>(*p)};
}

std::optional<CgroupDir> ResolveCgroupDir(const std::vector<MountInfo>& mounts,
                                          const std::vector<ProcCgroupLine>& cgroups,
                                          std::string_view controller) {
  for (int version : {1, 2}) {
    if (auto d = ResolveCgroupDirIn(version, mounts, cgroups, controller)) return d;
  }
  return std::nullopt;
}

std::optional<CgroupDir> ResolveCgroupDirIn(int version, const std::vector<MountInfo>& mounts,
                                            const std::vector<ProcCgroupLine>& cgroups,
                                            std::string_view controller) {
  const ProcCgroupLine* line = nullptr;
  for (const ProcCgroupLine& c : cgroups) {
    bool match = version == 1 ? HasOption(c.controllers, controller)
                              : c.hierarchy_id == 0 && c.controllers.empty();
    if (match) line = &c;
  }
  if (line == nullptr) return std::nullopt;
  const MountInfo* mount = nullptr;
  for (const MountInfo& m : mounts) {
    bool match = version == 1 ? m.fs_type == "cgroup" && HasOption(m.super_options, controller)
                              : m.fs_type == "cgroup2";
    if (!match) continue;
    bool under_root = m.root == "/" || line->path == m.root || line->path.starts_with(m.root + "/");
    if (mount == nullptr || under_root) mount = &m;
    if (under_root) break;
  }
  if (mount == nullptr) return std::nullopt;
  CgroupDir d{version, mount->mount_point, mount->mount_point};
  const std::string& root = mount->root;
  const std::string& path = line->path;
  bool inside = root == "/" || path == root || path.starts_with(root + "/");
  if (inside && path.find("/..") == std::string::npos) {
    std::string_view rel = std::string_view(path).substr(root == "/" ? 0 : root.size());
    while (!rel.empty() && rel.back() == '/') rel.remove_suffix(1);
    if (d.dir == "/") d.dir.clear();
    d.dir += rel;
    if (d.dir.empty()) d.dir = "/";
  }
  return d;
}

std::vector<std::string> CgroupChain(const CgroupDir& d) {
  std::vector<std::string> chain;
  std::string dir = d.dir;
  chain.push_back(dir);
  while (dir.size() > d.mount_point.size() && dir.starts_with(d.mount_point)) {
    size_t slash = dir.rfind('/');
    if (slash == std::string::npos) break;
    dir.resize(slash == 0 ? 1 : slash);  // the parent of "/a" is "/"
    if (dir.size() < d.mount_point.size()) break;
    chain.push_back(dir);
  }
  return chain;
}

CgroupFiles LocateCgroupFiles(Env* env, int pid) {
  CgroupFiles f;
  std::string buf;
  if (!env->ReadFile("/proc/self/mountinfo", &buf).ok()) return f;
  std::vector<MountInfo> mounts = ParseMountInfo(buf);
  if (!env->ReadFile(ProcPidFile(pid, "cgroup").c_str(), &buf).ok()) return f;
  std::vector<ProcCgroupLine> cgroups = ParseProcCgroup(buf);
  std::vector<std::string> names;
  auto resolve = [&](std::string_view controller) {
    std::optional<CgroupDir> d = ResolveCgroupDir(mounts, cgroups, controller);
    if (d && !env->ListDir(d->dir.c_str(), &names).ok()) d->dir = d->mount_point;
    return d;
  };
  f.memory = resolve("memory");
  f.cpu = resolve("cpu");
  if (f.memory) {
    bool v2 = f.memory->version == 2;
    for (const std::string& dir : CgroupChain(*f.memory)) {
      f.memory_limit.push_back(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
    }
    f.memory_current = f.memory->dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes");
  }
  if (f.cpu) {
    bool v2 = f.cpu->version == 2;
    for (const std::string& dir : CgroupChain(*f.cpu)) {
      f.cpu_quota.push_back(dir + (v2 ? "/cpu.max" : "/cpu.cfs_quota_us"));
      if (!v2) f.cpu_period.push_back(dir + "/cpu.cfs_period_us");
    }
  }
  return f;
}

CgroupLimits ReadCgroupLimits(Env* env, int pid) {
  CgroupFiles f = LocateCgroupFiles(env, pid);
  CgroupLimits l{f.memory, f.cpu};
  std::string buf;
  std::string period_buf;
  l.memory_limit_bytes = MemoryLimit(env, f, &buf);
  l.cpu_limit_cores = CpuLimit(env, f, &buf, &period_buf);
  if (f.memory && env->ReadFile(f.memory_current.c_str(), &buf).ok()) {
    if (auto v = text::ParseU64(text::Trim(buf))) l.memory_current_bytes = static_cast<double>(*v);
  }
  return l;
}

std::optional<uint64_t> ParseOomKills(std::string_view text) {
  while (!text.empty()) {
    std::string_view line = text::NextLine(&text);
    if (text::NextField(&line) == "oom_kill") return text::ParseU64(text::Trim(line));
  }
  return std::nullopt;
}

std::string OomKillsFile(const CgroupDir& memory) {
  return memory.dir + (memory.version == 2 ? "/memory.events" : "/memory.oom_control");
}

void OomKillWatch::Follow(const CgroupDir& memory) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Followed& f : followed_) {
    if (f.dir == memory.dir) return;
  }
  Followed f{memory.dir, OomKillsFile(memory)};
  if (!env_->ReadFile(f.file.c_str(), &buffer_).ok()) return;
  std::optional<uint64_t> count = ParseOomKills(buffer_);
  if (!count) return;
  f.since = *count;
  followed_.push_back(std::move(f));
}

std::optional<OomKillWatch::Kills> OomKillWatch::Read() {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<Kills> out;
  for (const Followed& f : followed_) {
    if (!env_->ReadFile(f.file.c_str(), &buffer_).ok()) continue;
    std::optional<uint64_t> count = ParseOomKills(buffer_);
    if (!count) continue;
    uint64_t kills = *count >= f.since ? *count - f.since : 0;
    if (!out || kills >= out->count) out = Kills{kills, f.dir};
  }
  return out;
}

bool CgroupSource::Moved() {
  if (!membership_.Read(env_, &buffer_).ok()) return false;  // gone
  return buffer_ != located_by_;
}

void CgroupSource::Locate(std::vector<Notice>* notices) {
  bool first = !located_;
  located_ = true;
  if (!membership_.Read(env_, &located_by_).ok()) located_by_.clear();
  files_ = LocateCgroupFiles(env_, pid_);
  current_file_.reset();
  if (files_.memory) oom_kills_->Follow(*files_.memory);
  if (first && !files_.memory && !files_.cpu) {
    notices->push_back({std::string(name()), "no cgroup memory or cpu controller found for " +
                                                 ProcPidFile(pid_, "cgroup")});
  }
}

void CgroupSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  bool refresh = tick.row_tick && tick.mono_s - limits_read_s_ >= kLimitsEvery_s;
  if (!located_ || (tick.row_tick && Moved())) {
    refresh = true;
    Locate(notices);
  }
  if (refresh) {
    limits_read_s_ = tick.mono_s;
    memory_limit_bytes_ = MemoryLimit(env_, files_, &buffer_);
    cpu_limit_cores_ = CpuLimit(env_, files_, &buffer_, &period_buffer_);
  }
  HostSample& h = out->host;
  Lower(&h.memory_limit_bytes, memory_limit_bytes_);
  Lower(&h.cpu_limit_cores, cpu_limit_cores_);
  if (files_.memory && !current_file_) current_file_.emplace(files_.memory_current);
  if (current_file_ && current_file_->Read(env_, &buffer_).ok()) {
    if (auto v = text::ParseU64(text::Trim(buffer_))) {
      h.cgroup_memory_current_bytes = static_cast<double>(*v);
    }
  }
}

}  // namespace tv

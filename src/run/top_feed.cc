#include "run/top_feed.h"

#include <fmt/format.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/host.h"
#include "core/metrics.h"
#include "run/live_dir.h"
#include "sources/gpu_source.h"
#include "sources/host_sources.h"
#include "sources/proc_pid_parse.h"
#include "store/live_record.h"

namespace tv {
namespace {

// A session's announcement; nullopt when it is not one (half written by an
// older version, edited by hand).
std::optional<TopSession> ParseSession(const std::string& text) {
  LiveRecord r;
  Status read = LiveFromJson(nlohmann::json::parse(text, nullptr, false), &r);
  if (!read.ok() && r.identity.pid == 0) return std::nullopt;
  TopSession s;
  s.pid = r.identity.pid;
  s.job_pid = r.identity.job_pid;
  s.mode = r.identity.mode;
  s.name = r.identity.name;
  for (const std::string& word : r.identity.command) {
    s.command += (s.command.empty() ? "" : " ") + word;
  }
  s.run_dir = r.identity.run_dir;
  s.start_t = r.identity.start_t;
  s.health_score = r.health_score;
  for (const LiveRecord::Finding& f : r.findings) {
    s.worst_critical |= f.severity == Severity::kCritical;
    s.findings.push_back(fmt::format("{} ({})", f.id, SeverityName(f.severity)));
  }
  for (const LiveRecord::Alert& a : r.alerts) {
    s.worst_critical |= a.severity == "critical";
    std::string text = fmt::format("{} ({})", a.name.empty() ? "?" : a.name, a.severity);
    if (a.gpu) text += fmt::format(" GPU {}", *a.gpu);
    s.alerts.push_back(std::move(text));
  }
  s.updated_t = r.row_t.value_or(0);
  const Totals& row = r.row.run;
  s.epoch = row.Value(metric::kTrainingEpoch);
  s.step = row.Value(metric::kTrainingStep);
  s.steps_per_second = row.Value(metric::kTrainingStepsPerSecond);
  s.data_wait_ratio = row.Value(metric::kTrainingDataWaitRatio);
  s.cpu_cores = row.Value(metric::kJobCpuCores);
  s.memory_bytes = row.Value(metric::kJobMemoryBytes);
  return s;
}

bool Alive(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

}  // namespace

TopFeed::TopFeed(bool gpus, std::string sessions_dir)
    : env_(Env::Default()), sessions_dir_(std::move(sessions_dir)) {
  host_ = MakeHostSources(env_, 0);
  if (!gpus) {
    gpu_error_ = "not read (--no-gpus)";
    return;
  }
  GpuSourceOptions options;  // every GPU, numbered as the driver does
  options.env = env_;
  options.all_processes = true;
  std::vector<Notice> notices;
  gpu_ = GpuSource::Create(options, &notices);
  if (!gpu_) {
    gpu_error_ = notices.empty() ? "no GPU" : notices.front().message;
    return;
  }
  for (const GpuInfo& g : gpu_->gpus()) gpu_names_[{g.physical_index, g.mig_instance}] = g.name;
}

TopFeed::~TopFeed() = default;

TopModel TopFeed::Next() {
  TopModel model;
  Clock* clock = Clock::Default();
  Tick tick{clock->MonotonicSeconds(), true};
  Sample sample;
  std::vector<Notice> notices;
  for (auto& source : host_) source->Read(tick, &sample, &notices);
  if (gpu_) gpu_->Read(tick, &sample, &notices);
  model.t = clock->WallSeconds();
  model.host = HostName();
  model.host_sample = std::move(sample.host);
  model.cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  model.gpu_error = gpu_error_;
  for (GpuSample& g : sample.gpus) {
    TopGpu gpu;
    auto name = gpu_names_.find({g.physical_index, g.mig_instance});
    if (name != gpu_names_.end()) gpu.name = name->second;
    gpu.processes = gpu_->ProcessesOf(g.uuid);
    gpu.sample = std::move(g);
    model.gpus.push_back(std::move(gpu));
  }
  ReadSessions(&model);
  ReadProcesses(tick.mono_s, &model);
  return model;
}

void TopFeed::ReadSessions(TopModel* model) {
  std::string dir = sessions_dir_;
  if (dir.empty()) {
    std::string error;
    dir = LiveSessionsDir(false, &error);
    if (dir.empty()) {
      // No session has run yet (the directory is made by the first); only a
      // directory that is not private is worth saying.
      struct stat st {};
      std::string parent = error.substr(0, error.find(':'));
      if (::lstat(parent.c_str(), &st) == 0) model->sessions_error = error;
      return;
    }
  }
  std::vector<std::string> names;
  if (!env_->ListDir(dir.c_str(), &names).ok()) return;
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (name.empty() || name[0] == '.' || !name.ends_with(".json")) continue;
    std::string path = fmt::format("{}/{}", dir, name);
    std::string text;
    if (!env_->ReadFile(path.c_str(), &text).ok()) continue;
    std::optional<TopSession> session = ParseSession(text);
    if (!session) continue;
    if (!Alive(session->pid)) {
      ::unlink(path.c_str());  // killed before it could remove its announcement
      continue;
    }
    model->sessions.push_back(std::move(*session));
  }
}

const TopFeed::Described& TopFeed::Describe(int pid, uint64_t starttime, const std::string& comm) {
  Described& d = described_[pid];
  if (d.starttime == starttime && !d.user.empty()) return d;
  d.starttime = starttime;
  std::string path = fmt::format("/proc/{}/cmdline", pid);
  std::string text;
  d.command.clear();
  if (env_->ReadFile(path.c_str(), &text).ok()) {
    while (!text.empty() && text.back() == '\0') text.pop_back();
    std::replace(text.begin(), text.end(), '\0', ' ');
    d.command = std::move(text);
  }
  if (d.command.empty()) d.command = fmt::format("[{}]", comm);
  struct stat st {};
  d.user.clear();
  if (::stat(fmt::format("/proc/{}", pid).c_str(), &st) == 0) {
    auto [it, added] = users_.try_emplace(st.st_uid);
    if (added) {
      passwd* pw = ::getpwuid(st.st_uid);
      it->second = pw != nullptr ? pw->pw_name : std::to_string(st.st_uid);
    }
    d.user = it->second;
  }
  if (d.user.empty()) d.user.push_back('?');
  return d;
}

void TopFeed::ReadProcesses(double mono_s, TopModel* model) {
  std::vector<std::string> names;
  env_->ListDir("/proc", &names);
  struct Entry {
    ProcStat stat;
    int session = -1;
    bool shown = false;
  };
  std::unordered_map<int, Entry> procs;
  procs.reserve(names.size());
  std::string text;
  for (const std::string& name : names) {
    int pid = 0;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (ec != std::errc() || end != name.data() + name.size() || pid <= 0) continue;
    std::string path = "/proc/" + name + "/stat";
    if (!env_->ReadFile(path.c_str(), &text).ok()) continue;
    if (std::optional<ProcStat> stat = ParseProcStat(text)) procs[pid].stat = std::move(*stat);
  }
  // Each session's job: its root and every descendant (a process belongs to
  // the nearest session root above it).
  std::unordered_map<int, int> root_session;
  for (size_t i = 0; i < model->sessions.size(); ++i) {
    root_session[model->sessions[i].job_pid] = static_cast<int>(i);
  }
  for (auto& [pid, entry] : procs) {
    int at = pid;
    for (int hops = 0; at > 0 && hops < 64; ++hops) {
      if (auto s = root_session.find(at); s != root_session.end()) {
        entry.session = s->second;
        entry.shown = true;
        break;
      }
      auto up = procs.find(at);
      if (up == procs.end()) break;
      at = up->second.stat.ppid;
    }
  }
  struct GpuUse {
    std::vector<int> gpus;
    std::optional<double> memory;
    std::optional<double> sm;
  };
  std::unordered_map<int, GpuUse> gpu_use;
  for (TopGpu& gpu : model->gpus) {
    double sessions_memory = 0;
    bool any = false;
    for (const GpuProcess& p : gpu.processes) {
      GpuUse& use = gpu_use[p.pid];
      use.gpus.push_back(gpu.sample.index);
      if (p.memory_bytes) use.memory = use.memory.value_or(0) + *p.memory_bytes;
      if (p.sm_util_ratio) use.sm = std::max(use.sm.value_or(0), *p.sm_util_ratio);
      auto e = procs.find(p.pid);
      if (e == procs.end()) continue;
      e->second.shown = true;
      if (e->second.session >= 0 && p.memory_bytes) {
        sessions_memory += *p.memory_bytes;
        any = true;
      }
    }
    if (any) gpu.sessions_memory_bytes = sessions_memory;
  }
  double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  double tick_s = 1.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  double elapsed = previous_mono_s_ >= 0 ? mono_s - previous_mono_s_ : 0;
  std::unordered_map<int, Seen> seen;
  for (auto& [pid, entry] : procs) {
    if (!entry.shown) continue;
    const ProcStat& st = entry.stat;
    TopProcess p;
    p.pid = pid;
    p.ppid = st.ppid;
    p.name = st.comm;
    p.rss_bytes = static_cast<double>(st.rss_pages) * page;
    p.running = st.state == 'R';
    p.session = entry.session;
    uint64_t ticks = st.utime_ticks + st.stime_ticks;
    seen[pid] = {st.starttime_ticks, ticks};
    auto before = seen_.find(pid);
    if (elapsed > 0 && before != seen_.end() && before->second.starttime == st.starttime_ticks) {
      p.cpu_cores = static_cast<double>(ticks - before->second.ticks) * tick_s / elapsed;
    }
    const Described& d = Describe(pid, st.starttime_ticks, st.comm);
    p.command = d.command;
    p.user = d.user;
    if (auto use = gpu_use.find(pid); use != gpu_use.end()) {
      p.gpus = use->second.gpus;
      p.gpu_memory_bytes = use->second.memory;
      p.gpu_sm_util_ratio = use->second.sm;
    }
    model->processes.push_back(std::move(p));
  }
  std::sort(model->processes.begin(), model->processes.end(),
            [](const TopProcess& a, const TopProcess& b) { return a.pid < b.pid; });
  seen_ = std::move(seen);
  previous_mono_s_ = mono_s;
  std::erase_if(described_, [&](const auto& d) { return !seen_.contains(d.first); });
}

}  // namespace tv

#include "sources/node_jobs.h"

#include <algorithm>
#include <tuple>

#include "core/host.h"
#include "sources/cgroup.h"
#include "sources/jobs.h"
#include "sources/proc_pid_parse.h"
#include "sources/text.h"

namespace tv {

struct NodeJobsSource::Job {
  std::shared_ptr<JobIdentity> identity;
  double started_t = 0;
  bool served = false;
  JobCgroupDirs dirs;
  std::unique_ptr<CgroupUsageSource> usage;  // null without a cgroup
  int environ_tries = 0;
  bool environ_read = false;
  double limits_read_s = -1;
  std::optional<double> memory_limit_bytes;
  std::optional<double> cpu_limit_cores;
  std::vector<int> pids;
  std::vector<JobGpuShare> gpus;
};

namespace {

constexpr double kJobLimitsEvery_s = 10;
// A job's environment is looked for in this many of its processes (the first
// may be a scheduler's helper, slurmstepd, whose environment is not the job's).
constexpr int kEnvironTries = 8;

// The lines of /proc/PID/cgroup in the order they are asked for a job: the
// unified hierarchy first, then memory and cpuacct, then the rest.
std::vector<const ProcCgroupLine*> ByPreference(const std::vector<ProcCgroupLine>& lines) {
  std::vector<const ProcCgroupLine*> order;
  order.reserve(lines.size());
  auto rank = [](const ProcCgroupLine& l) {
    if (l.controllers.empty()) return 0;
    if (HasOption(l.controllers, "memory")) return 1;
    if (HasOption(l.controllers, "cpuacct")) return 2;
    return 3;
  };
  for (const ProcCgroupLine& l : lines) order.push_back(&l);
  std::stable_sort(
      order.begin(), order.end(),
      [&](const ProcCgroupLine* a, const ProcCgroupLine* b) { return rank(*a) < rank(*b); });
  return order;
}

std::optional<JobPath> JobOfLines(const std::vector<ProcCgroupLine>& lines) {
  for (const ProcCgroupLine* l : ByPreference(lines)) {
    if (std::optional<JobPath> job = JobFromCgroupPath(l->path)) return job;
  }
  return std::nullopt;
}

std::string PathKey(const JobPath& job) { return job.kind + "/" + job.id; }

// The real UID on /proc/PID/status's "Uid:" line.
std::optional<uint64_t> RealUid(std::string_view status) {
  while (!status.empty()) {
    std::string_view line = text::NextLine(&status);
    if (text::NextField(&line) == "Uid:") return text::ParseU64(text::NextField(&line));
  }
  return std::nullopt;
}

// Whether `device` (an index or a UUID, as an environment names it) is `gpu`.
bool Names(std::string_view device, const GpuSample& gpu) {
  if (device.starts_with("GPU-") || device.starts_with("MIG-")) return device == gpu.uuid;
  std::optional<uint64_t> index = text::ParseU64(device);
  return index && gpu.mig_instance < 0 && static_cast<int>(*index) == gpu.physical_index;
}

}  // namespace

NodeJobsSource::NodeJobsSource(Env* env, int self_pid) : env_(env), self_pid_(self_pid) {}
NodeJobsSource::~NodeJobsSource() = default;

std::string NodeJobsSource::OwnerOf(int pid) {
  if (!env_->ReadFile(ProcPidFile(pid, "status").c_str(), &buffer_).ok()) return {};
  std::optional<uint64_t> uid = RealUid(buffer_);
  if (!uid) return {};
  return UserNameOf(static_cast<unsigned>(*uid)).value_or(std::to_string(*uid));
}

std::string NodeJobsSource::KeyOf(const Proc& proc) {
  if (!proc.key.empty()) return proc.key;
  return proc.session > 0 ? "tree/" + std::to_string(proc.session) : std::string();
}

void NodeJobsSource::ReadSession(int pid, Proc* proc) {
  proc->session = 0;
  if (!env_->ReadFile(ProcPidFile(pid, "stat").c_str(), &buffer_).ok()) return;
  if (std::optional<ProcStat> st = ParseProcStat(buffer_)) proc->session = st->session;
}

bool NodeJobsSource::Place(int pid, Proc* proc) {
  if (!env_->ReadFile(ProcPidFile(pid, "cgroup").c_str(), &buffer_).ok()) return false;
  std::vector<ProcCgroupLine> lines = ParseProcCgroup(buffer_);
  std::erase_if(lines, [&](ProcCgroupLine& l) { return !namespace_->Resolve(&l); });
  std::optional<JobPath> path = JobOfLines(lines);
  if (!path) return true;
  proc->key = PathKey(*path);
  if (auto known = jobs_.find(proc->key); known != jobs_.end()) {
    FillDirs(lines, proc->key, known->second.get());
    return true;
  }
  auto job = std::make_unique<Job>();
  auto identity = std::make_shared<JobIdentity>();
  identity->job = path->id;
  identity->kind = path->kind;
  identity->cgroup = path->dir;
  if (!path->container_id.empty()) identity->container = path->container_id.substr(0, 12);
  job->identity = identity;
  job->served = path->kind == "slurm";
  identity->user = OwnerOf(pid);
  FillDirs(lines, proc->key, job.get());
  jobs_.emplace(proc->key, std::move(job));
  return true;
}

void NodeJobsSource::FillDirs(const std::vector<ProcCgroupLine>& lines, const std::string& key,
                              Job* job) {
  // The job's own directory in each hierarchy whose line places it in this
  // job. A scheduler may move a job's processes into some hierarchies later
  // than others (Slurm's cpuacct after its memory): a hierarchy the job has
  // no directory in yet is taken from a later process.
  bool added = false;
  for (auto [version, controller, dir] :
       {std::tuple{2, "", &job->dirs.unified}, std::tuple{1, "cpuacct", &job->dirs.cpuacct},
        std::tuple{1, "memory", &job->dirs.memory}}) {
    if (!dir->empty()) continue;
    for (const ProcCgroupLine& l : lines) {
      bool match = version == 1 ? HasOption(l.controllers, controller) : l.controllers.empty();
      std::optional<JobPath> here = match ? JobFromCgroupPath(l.path) : std::nullopt;
      if (!here || PathKey(*here) != key) continue;
      ProcCgroupLine at = l;
      at.path = here->dir;
      if (auto d = ResolveCgroupDirIn(version, mounts_, {at}, controller)) {
        *dir = d->dir;
        added = true;
      }
    }
  }
  if (added) job->usage = std::make_unique<CgroupUsageSource>(env_, job->dirs, true);
}

void NodeJobsSource::ReadEnviron(Job& job) {
  if (job.environ_read || job.pids.empty() || job.environ_tries >= kEnvironTries) return;
  int pid = job.pids[static_cast<size_t>(job.environ_tries) % job.pids.size()];
  ++job.environ_tries;
  if (!env_->ReadFile(ProcPidFile(pid, "environ").c_str(), &buffer_).ok()) return;
  auto values = EnvironValues(buffer_, JobEnvironNames());
  // Samples already handed on hold the identity as it was: change a copy.
  auto copy = std::make_shared<JobIdentity>(*job.identity);
  JobIdentity& id = *copy;
  if (id.kind == "slurm" && EnvironValue(values, "SLURM_JOB_ID").empty()) {
    return;  // a helper: try another
  }
  job.environ_read = true;
  FillSlurmJobFields(values, &id);
  if (id.kind == "kubernetes") {
    id.pod = EnvironValue(values, "HOSTNAME");  // a pod's host name is its name
    id.namespace_name = EnvironValue(values, "POD_NAMESPACE");
  }
  if (std::optional<GpuAllocation> gpus = AllocatedGpus(values)) {
    id.allocated_gpus = gpus->devices;
    id.allocated_from = gpus->variable;
  }
  job.identity = std::move(copy);
}

void NodeJobsSource::ReadLimits(Job& job, double now_s) {
  if (job.limits_read_s >= 0 && now_s - job.limits_read_s < kJobLimitsEvery_s) return;
  job.limits_read_s = now_s;
  job.memory_limit_bytes.reset();
  job.cpu_limit_cores.reset();
  const JobCgroupDirs& d = job.dirs;
  bool memory =
      (!d.unified.empty() && env_->ReadFile((d.unified + "/memory.max").c_str(), &buffer_).ok()) ||
      (!d.memory.empty() &&
       env_->ReadFile((d.memory + "/memory.limit_in_bytes").c_str(), &buffer_).ok());
  if (memory) job.memory_limit_bytes = ParseMemoryLimit(buffer_).limit;
  std::string period;
  if (!d.unified.empty() && env_->ReadFile((d.unified + "/cpu.max").c_str(), &buffer_).ok()) {
    job.cpu_limit_cores = ParseCpuMax(buffer_).limit;
  } else if (!d.cpuacct.empty() &&
             env_->ReadFile((d.cpuacct + "/cpu.cfs_quota_us").c_str(), &buffer_).ok() &&
             env_->ReadFile((d.cpuacct + "/cpu.cfs_period_us").c_str(), &period).ok()) {
    job.cpu_limit_cores = ParseCfsQuota(buffer_, period).limit;
  }
}

void NodeJobsSource::ShareGpus(const Sample& sample) {
  auto share = [](Job& job, size_t g) -> JobGpuShare& {
    for (JobGpuShare& s : job.gpus) {
      if (s.gpu == g) return s;
    }
    job.gpus.push_back(JobGpuShare{.gpu = g});
    return job.gpus.back();
  };
  for (size_t g = 0; g < sample.gpus.size(); ++g) {
    const GpuSample& gpu = sample.gpus[g];
    for (const GpuProcess& p : gpu.processes) {
      auto proc = procs_.find(p.pid);
      if (proc == procs_.end()) continue;
      auto job = jobs_.find(KeyOf(proc->second));
      if (job == jobs_.end()) continue;
      job->second->served = true;
      JobGpuShare& s = share(*job->second, g);
      ++s.processes;
      if (p.memory_bytes) s.memory_bytes = s.memory_bytes.value_or(0) + *p.memory_bytes;
      if (p.sm_util_ratio) {
        s.sm_util_ratio = std::min(1.0, s.sm_util_ratio.value_or(0) + *p.sm_util_ratio);
      }
    }
    for (auto& [key, job] : jobs_) {
      for (const std::string& device : job->identity->allocated_gpus) {
        if (!Names(device, gpu)) continue;
        job->served = true;
        share(*job, g).allocated = true;
      }
    }
  }
}

void NodeJobsSource::Read(const Tick& tick, Sample* out, std::vector<Notice>* notices) {
  if (!namespace_) {
    if (env_->ReadFile("/proc/self/mountinfo", &buffer_).ok()) mounts_ = ParseMountInfo(buffer_);
    namespace_ = std::make_unique<CgroupNamespace>(env_, &mounts_, self_pid_);
    if (!namespace_->unresolved().empty()) {
      std::string which;
      for (const std::string& h : namespace_->unresolved())
        which += (which.empty() ? "" : ", ") + h;
      notices->push_back(
          {"node_jobs",
           "the agent is in a cgroup namespace of its own and finds itself in no whole mount of "
           "the host's cgroup tree (" +
               which +
               "): the jobs there are found by their paths, without their CPU and memory (mount "
               "the host's /sys/fs/cgroup whole, read-only)"});
    }
  }
  names_.clear();
  pids_.clear();
  if (!env_->ListDir("/proc", &names_).ok()) return;
  for (const std::string& name : names_) {
    if (std::optional<uint64_t> pid = text::ParseU64(name)) pids_.push_back(static_cast<int>(*pid));
  }
  std::sort(pids_.begin(), pids_.end());
  std::erase_if(procs_, [&](const auto& p) {
    return !std::binary_search(pids_.begin(), pids_.end(), p.first);
  });
  for (int pid : pids_) {
    auto known = procs_.find(pid);
    if (known != procs_.end() && known->second.settled) continue;
    // A new process is placed again at the next tick: a scheduler moves the
    // processes it starts into the job's cgroup just after they fork.
    Proc proc;
    proc.settled = known != procs_.end();
    if (!Place(pid, &proc)) continue;
    if (known != procs_.end()) {
      known->second = std::move(proc);
    } else {
      procs_.emplace(pid, std::move(proc));
    }
  }
  if (auto self = procs_.find(self_pid_); self != procs_.end()) self_key_ = self->second.key;
  // A process in no job's cgroup that uses a GPU: a job of its session.
  std::vector<int> tree_sessions;
  for (const GpuSample& gpu : out->gpus) {
    for (const GpuProcess& p : gpu.processes) {
      auto proc = procs_.find(p.pid);
      if (proc == procs_.end() || !proc->second.key.empty()) continue;
      if (proc->second.session < 0) ReadSession(p.pid, &proc->second);
      if (proc->second.session > 0) tree_sessions.push_back(proc->second.session);
    }
  }
  for (int sid : tree_sessions) {
    std::string key = "tree/" + std::to_string(sid);
    if (jobs_.contains(key)) continue;
    auto job = std::make_unique<Job>();
    auto identity = std::make_shared<JobIdentity>();
    identity->job = "tree-" + std::to_string(sid);
    identity->kind = "tree";
    if (env_->ReadFile(ProcPidFile(sid, "comm").c_str(), &buffer_).ok()) {
      identity->name = std::string(text::Trim(buffer_));
    }
    identity->user = OwnerOf(sid);
    job->identity = identity;
    jobs_.emplace(key, std::move(job));
  }
  for (auto& [key, job] : jobs_) {
    job->pids.clear();
    job->gpus.clear();
  }
  bool trees = std::any_of(jobs_.begin(), jobs_.end(),
                           [](const auto& j) { return j.second->identity->kind == "tree"; });
  for (int pid : pids_) {
    auto proc = procs_.find(pid);
    if (proc == procs_.end()) continue;
    if (pid == self_pid_) continue;  // the agent is no member of a tree
    if (proc->second.key.empty() && trees && proc->second.session < 0)
      ReadSession(pid, &proc->second);
    if (auto job = jobs_.find(KeyOf(proc->second)); job != jobs_.end()) {
      job->second->pids.push_back(pid);
    }
  }
  std::erase_if(jobs_, [](const auto& j) { return j.second->pids.empty(); });
  for (auto& [key, job] : jobs_) ReadEnviron(*job);
  ShareGpus(*out);
  out->node_jobs.clear();
  for (auto& [key, job] : jobs_) {
    if (!job->served || key == self_key_) continue;
    if (job->started_t == 0) job->started_t = out->t;
    NodeJob& nj = out->node_jobs.emplace_back();
    nj.identity = job->identity;
    nj.started_t = job->started_t;
    if (job->usage) {
      Sample scratch;
      scratch.host.last_pid = out->host.last_pid;
      std::vector<Notice> said;
      job->usage->Read(tick, &scratch, &said);
      nj.job = std::move(scratch.job);
      ReadLimits(*job, tick.mono_s);
    }
    nj.job.processes = static_cast<double>(job->pids.size());
    nj.memory_limit_bytes = job->memory_limit_bytes;
    nj.cpu_limit_cores = job->cpu_limit_cores;
    nj.pids = job->pids;
    nj.gpus = job->gpus;
    if (!job->environ_read && job->environ_tries >= kEnvironTries && !said_environ_) {
      said_environ_ = true;
      notices->push_back({"node_jobs", "the environment of job " + job->identity->job +
                                           "'s processes cannot be read (the agent needs root "
                                           "or the job's user): its Slurm account, partition "
                                           "and allocated GPUs are left out"});
    }
  }
}

}  // namespace tv

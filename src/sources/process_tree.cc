#include "sources/process_tree.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "sources/proc_pid_parse.h"

namespace tv {
namespace {

constexpr char kSourceName[] = "process_tree";

double SysconfOr(long configured, int name, double fallback) {
  if (configured > 0) return static_cast<double>(configured);
  long v = sysconf(name);
  return v > 0 ? static_cast<double>(v) : fallback;
}

size_t DefaultMaxHeldFiles() {
  constexpr size_t kMost = 1024;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kMost;
  return std::min<size_t>(kMost, limit.rlim_cur / 4);
}

ProcessInfo InfoOf(int pid, int ppid, std::string name, std::string cmdline) {
  ProcessInfo info;
  info.pid = pid;
  info.ppid = ppid;
  info.name = std::move(name);
  info.cmdline = std::move(cmdline);
  return info;
}

}  // namespace

ProcessTreeSource::ProcessTreeSource(Env* env, std::vector<int> roots, ProcessTreeOptions options)
    : env_(env),
      options_(std::move(options)),
      ticks_per_second_(SysconfOr(options_.clock_ticks_per_second, _SC_CLK_TCK, 100)),
      page_size_bytes_(SysconfOr(options_.page_size_bytes, _SC_PAGESIZE, 4096)),
      pss_scheduler_(options_.pss),
      max_held_files_(options_.max_held_files.value_or(DefaultMaxHeldFiles())) {
  reaper_pid_ = options_.reaper_pid.value_or(static_cast<int>(::getpid()));
  if (!options_.cpu_seconds) options_.cpu_seconds = ThreadCpuSeconds;
  size_t n = std::max<size_t>(options_.expected_processes, 8);
  procs_.reserve(n);
  members_.reserve(n);
  prev_members_.reserve(n);
  queue_.reserve(n * 2);
  kids_.reserve(n);
  names_.reserve(64);
  buf_.reserve(4096);
  SetRoots(std::move(roots));
}

void ProcessTreeSource::SetRoots(std::vector<int> roots) {
  roots_ = std::move(roots);
  root_starts_.assign(roots_.size(), std::nullopt);
  forget_members_ = true;
  last_walk_s_.reset();
}

// Paths are built into path_ with to_chars: snprintf showed up in profiles.
const char* ProcessTreeSource::Path(int pid, const char* leaf) { return TaskPath(pid, 0, leaf); }

const char* ProcessTreeSource::TaskPath(int pid, int tid, const char* leaf) {
  char* p = path_;
  char* end = path_ + sizeof(path_) - 1;
  auto put = [&](std::string_view text) {
    size_t n = std::min<size_t>(text.size(), end - p);
    std::memcpy(p, text.data(), n);
    p += n;
  };
  auto put_int = [&](int v) { p = std::to_chars(p, end, v).ptr; };
  put("/proc/");
  put_int(pid);
  if (tid != 0) {
    put("/task/");
    put_int(tid);
  }
  put("/");
  put(leaf);
  *p = '\0';
  return path_;
}

void ProcessTreeSource::Read(const Tick& tick, Sample* sample, std::vector<Notice>* notices) {
  if (roots_.empty()) return;
  JobSample* job = &sample->job;
  if (!ReadsFilesNow(tick, *sample)) {
    // The job's cgroup counts its CPU this tick: the processes as last read.
    Publish(job);
    job->read_bytes_per_second = last_read_rate_;
    job->write_bytes_per_second = last_write_rate_;
    job->process_files_age_s = tick.mono_s - *last_tick_s_;
    return;
  }
  rows_since_read_ = 0;
  last_digest_ = job->cgroup_procs_digest;
  memory_at_read_ = MemorySignal(*sample);
  // New members can only come from a fork. When the host's last PID has not
  // moved, no children file can have changed: the known members are read, and
  // their children files are not.
  const std::optional<uint64_t>& forks = sample->host.last_pid;
  bool look = !forks || !last_forks_ || *forks != *last_forks_ || forget_members_;
  last_forks_ = forks;
  bool all_threads =
      (!last_walk_s_ || tick.mono_s - *last_walk_s_ >= options_.thread_walk_interval_s) &&
      (!forks || !forks_at_walk_ || *forks != *forks_at_walk_ || forget_members_);
  if (all_threads) {
    last_walk_s_ = tick.mono_s;
    forks_at_walk_ = forks;
    look = true;
  }

  tick_dt_s_ = last_tick_s_ ? std::max(0.0, tick.mono_s - *last_tick_s_) : 0.0;
  Walk(look, all_threads, job, notices);
  ReadReaper(notices);
  SweepExited(job);
  if (tick.row_tick) ReadIo(tick.mono_s, job, notices);
  if (rss_sum_bytes_ < rss_at_pss_round_bytes_ * (1 - options_.rss_fall_ratio)) {
    memory_fell_ = true;
  }
  // A change is acted on from the tick after it was seen: by then a new worker
  // has mapped what it shares with its parent (counted 0 until then, below).
  // Memory given back (a zombie, a fall of RSS) is acted on at once.
  bool change_ripe = (membership_changed_ && changed_seq_ < seq_) || memory_fell_;
  if (!members_.empty() && pss_scheduler_.Due(tick.mono_s, change_ripe)) {
    PssRound(tick.mono_s, notices);
  }
  Sum(tick.mono_s, job);
  job->process_files_age_s = 0;
}

std::optional<double> ProcessTreeSource::MemorySignal(const Sample& sample) {
  return sample.host.cgroup_memory_current_bytes ? sample.host.cgroup_memory_current_bytes
                                                 : sample.host.memory_used_bytes;
}

bool ProcessTreeSource::ReadsFilesNow(const Tick& tick, const Sample& sample) {
  const JobSample& job = sample.job;
  // Without a cgroup of the job's own, its files are the job's only count.
  if (!job.cgroup_procs_digest || !last_tick_s_ || forget_members_) return true;
  if (job.cgroup_procs_digest != last_digest_) return true;  // a process came or went
  if (membership_changed_) return true;                      // a PSS round owed to a change
  // Memory taken or given back: whose it is, and a peak no row would see.
  std::optional<double> memory = MemorySignal(sample);
  if (memory && memory_at_read_ &&
      std::abs(*memory - *memory_at_read_) >
          std::max(kMemoryMoveBytes, kMemoryMoveRatio * *memory_at_read_)) {
    return true;
  }
  if (!tick.row_tick) return false;
  size_t every = (members_.size() + kProcessesPerRowRead - 1) / kProcessesPerRowRead;
  return ++rows_since_read_ >= std::max<size_t>(every, 1);
}

void ProcessTreeSource::Walk(bool look, bool all_threads, JobSample* job,
                             std::vector<Notice>* notices) {
  ++seq_;
  baseline_walk_ = forget_members_;
  // A shortfall is normally made up within a tick or two (the reaper's usage
  // is read after the child left); one that lasts was no reaping we can see
  // (a parent that ignores SIGCHLD has its children reaped unaccounted).
  bool short_by = cpu_delta_ticks_ < 0 && !baseline_walk_ && ++short_ticks_ <= kMaxShortTicks;
  if (!short_by) {
    cpu_delta_ticks_ = 0;
    short_ticks_ = 0;
  }
  rss_sum_bytes_ = 0;
  std::swap(members_, prev_members_);
  members_.clear();
  queue_.clear();
  for (size_t i = 0; i < roots_.size(); ++i) {
    queue_.push_back({roots_[i], static_cast<int>(i), Via::kRoot});
  }
  // Former members come after the tree found from the roots, so a process
  // still in the tree is taken through its parent's listing.
  size_t head = 0;
  for (int pass = 0; pass < 2; ++pass) {
    while (head < queue_.size()) {
      Candidate c = queue_[head++];
      Visit(c, look, all_threads, job, notices);
    }
    if (pass == 0 && !forget_members_) {
      for (int pid : prev_members_) queue_.push_back({pid, 0, Via::kKnown});
    }
  }
  forget_members_ = false;
}

void ProcessTreeSource::Visit(const Candidate& c, bool look, bool all_threads, JobSample* job,
                              std::vector<Notice>* notices) {
  auto it = procs_.find(c.pid);
  if (it != procs_.end() && it->second.seen == seq_) return;  // already in this tick
  if (!ReadStat(c.pid, it != procs_.end() ? &it->second : nullptr, notices)) return;  // gone
  std::optional<ProcStat> st = ParseProcStat(buf_);
  if (!st || st->pid != c.pid) return;
  bool known = it != procs_.end() && it->second.start_ticks == st->starttime_ticks;
  switch (c.via) {
    case Via::kRoot: {
      auto& start = root_starts_[c.parent];
      if (start && *start != st->starttime_ticks) return;  // the root's PID was reused
      start = st->starttime_ticks;
      break;
    }
    case Via::kChild:
      if (st->ppid != c.parent) return;  // PID reused between listing and reading
      break;
    case Via::kKnown:
      if (!known) return;
      break;
  }

  if (!known) {
    MembershipChanged();
    if (it != procs_.end()) {  // PID reuse: the old process left
      Proc& old = it->second;
      ReleaseAll(&old);
      job->exited.push_back(InfoOf(c.pid, old.ppid, std::move(old.comm), std::move(old.cmdline)));
      old = Proc{};
    } else {
      it = procs_.emplace(c.pid, Proc{}).first;
    }
    it->second.start_ticks = st->starttime_ticks;
  }
  Proc& p = it->second;
  if (!known || p.comm != st->comm) {  // new, or exec'd a new program: read its command
    p.comm = st->comm;
    p.cmdline.clear();
    if (env_->ReadFile(Path(c.pid, "cmdline"), &buf_).ok()) p.cmdline = FormatCmdline(buf_);
    p.cmdline_retries = p.cmdline.empty() ? kCmdlineRetries : 0;
    if (known) job->execed.push_back(InfoOf(c.pid, st->ppid, p.comm, p.cmdline));
  } else if (p.cmdline_retries > 0) {  // caught inside exec: its arguments come now
    --p.cmdline_retries;
    if (env_->ReadFile(Path(c.pid, "cmdline"), &buf_).ok()) p.cmdline = FormatCmdline(buf_);
    if (!p.cmdline.empty()) {
      p.cmdline_retries = 0;
      job->execed.push_back(InfoOf(c.pid, st->ppid, p.comm, p.cmdline));
    }
  }
  if (!known) job->started.push_back(InfoOf(c.pid, st->ppid, p.comm, p.cmdline));
  uint64_t cpu = st->utime_ticks + st->stime_ticks;
  uint64_t total = cpu + st->children_ticks;
  if (known) {
    cpu_delta_ticks_ +=
        static_cast<int64_t>(total) - static_cast<int64_t>(p.cpu_ticks + p.children_ticks);
  } else if (!baseline_walk_) {
    // Forked since the last tick: all its time is this tick's. One found late
    // (forked by another thread, an all-threads walk away) counts at most a
    // tick's worth per thread; the rest was before anyone looked.
    double most = tick_dt_s_ * ticks_per_second_ *
                  static_cast<double>(std::max<uint64_t>(st->num_threads, 1));
    cpu_delta_ticks_ += static_cast<int64_t>(std::min(static_cast<double>(total), most));
  }
  p.cpu_ticks = cpu;
  p.children_ticks = st->children_ticks;
  bool zombie = st->state == 'Z';
  if (known && zombie && !p.zombie) memory_fell_ = true;
  p.zombie = zombie;
  p.ppid = st->ppid;
  NotePages(st->start_code, known, &p);
  p.rss_bytes = static_cast<uint64_t>(static_cast<double>(st->rss_pages) * page_size_bytes_);
  rss_sum_bytes_ += static_cast<double>(p.rss_bytes);
  p.threads = st->num_threads;
  p.seen = seq_;
  members_.push_back(c.pid);

  if (zombie) return;  // a zombie has no threads and no children left
  if (!look) return;
  QueueChildren(c.pid, c.pid, &p, notices);
  if (!all_threads || st->num_threads <= 1) return;
  if (!env_->ListDir(Path(c.pid, "task"), &names_).ok()) return;
  for (const std::string& name : names_) {
    int tid = 0;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), tid);
    if (ec != std::errc() || tid == c.pid) continue;
    QueueChildren(c.pid, tid, nullptr, notices);
  }
}

// Reads the stat of `pid` into buf_: through the member's held file, or by path
// for a process not yet known or whose held file failed (it exited; the PID may
// be another process's now).
bool ProcessTreeSource::ReadStat(int pid, Proc* known, std::vector<Notice>* notices) {
  const char* path = Path(pid, "stat");
  if (known == nullptr) return env_->ReadFile(path, &buf_).ok();
  bool was_held = known->stat_file != nullptr;
  if (ReadHeld(&known->stat_file, path, notices).ok()) return true;
  if (!was_held) return false;
  ReleaseAll(known);
  return env_->ReadFile(Path(pid, "stat"), &buf_).ok();
}

Status ProcessTreeSource::ReadHeld(std::unique_ptr<RereadableFile>* file, const char* path,
                                   std::vector<Notice>* notices) {
  if (*file) {
    Status s = (*file)->Read(&buf_);
    if (!s.ok()) Release(file);
    return s;
  }
  if (held_files_ >= max_held_files_) return env_->ReadFile(path, &buf_);
  Status s = env_->OpenRereadable(path, file);
  if (s.ok()) {
    ++held_files_;
    s = (*file)->Read(&buf_);
    if (!s.ok()) Release(file);
    return s;
  }
  if (s.code() == Status::Code::kNotFound || s.code() == Status::Code::kPermissionDenied) {
    return s;
  }
  // Out of file descriptors (or memory): give back every held file for good.
  for (auto& [pid, p] : procs_) ReleaseAll(&p);
  max_held_files_ = 0;
  if (!said_fds_short_) {
    said_fds_short_ = true;
    notices->push_back({kSourceName, s.message() +
                                         ": process files are no longer held open between "
                                         "ticks (slower reads)"});
  }
  return env_->ReadFile(path, &buf_);
}

void ProcessTreeSource::Release(std::unique_ptr<RereadableFile>* file) {
  if (!*file) return;
  file->reset();
  --held_files_;
}

void ProcessTreeSource::ReleaseAll(Proc* p) {
  Release(&p->stat_file);
  Release(&p->children_file);
  Release(&p->io_file);
}

void ProcessTreeSource::QueueChildren(int pid, int tid, Proc* p, std::vector<Notice>* notices) {
  const char* path = TaskPath(pid, tid, "children");
  Status s =
      p != nullptr ? ReadHeld(&p->children_file, path, notices) : env_->ReadFile(path, &buf_);
  if (!s.ok()) {
    // Gone (normal), or a kernel without CONFIG_PROC_CHILDREN: say that once.
    if (!said_no_children_ && pid == tid && s.code() == Status::Code::kNotFound &&
        env_->ReadFile(Path(pid, "stat"), &buf_).ok()) {
      said_no_children_ = true;
      notices->push_back({kSourceName, s.message() +
                                           " (kernel without CONFIG_PROC_CHILDREN?): only the "
                                           "root processes are followed"});
    }
    return;
  }
  kids_.clear();
  AppendChildPids(buf_, &kids_);
  for (int kid : kids_) {
    if (kid != options_.excluded_pid) queue_.push_back({kid, pid, Via::kChild});
  }
}

void ProcessTreeSource::ReadReaper(std::vector<Notice>* notices) {
  reaper_read_ = false;
  auto member = procs_.find(reaper_pid_);
  if (reaper_pid_ <= 0 || (member != procs_.end() && member->second.seen == seq_)) {
    reaper_children_ticks_.reset();  // a member: its reaped time is counted as such
    return;
  }
  std::optional<ProcStat> st;
  if (ReadHeld(&reaper_stat_, Path(reaper_pid_, "stat"), notices).ok()) st = ParseProcStat(buf_);
  if (!st) {
    reaper_children_ticks_.reset();
    return;
  }
  if (reaper_children_ticks_ && !baseline_walk_) {
    cpu_delta_ticks_ +=
        static_cast<int64_t>(st->children_ticks) - static_cast<int64_t>(*reaper_children_ticks_);
    reaper_read_ = true;
  }
  reaper_children_ticks_ = st->children_ticks;
}

bool ProcessTreeSource::ReapedInView(const Proc& p) const {
  int parent = p.ppid;
  for (size_t hops = 0; hops <= procs_.size(); ++hops) {
    auto it = procs_.find(parent);
    if (it != procs_.end() && it->second.seen == seq_) return true;
    if (parent == reaper_pid_) return reaper_read_;
    if (it == procs_.end()) return false;  // outside the job: its time is not counted
    parent = it->second.ppid;              // left too: whoever reaps it reaps this
  }
  return false;
}

void ProcessTreeSource::SweepExited(JobSample* job) {
  for (const auto& [pid, p] : procs_) {
    if (p.seen != seq_ && ReapedInView(p)) {
      cpu_delta_ticks_ -= static_cast<int64_t>(p.cpu_ticks + p.children_ticks);
    }
  }
  for (auto it = procs_.begin(); it != procs_.end();) {
    Proc& p = it->second;
    if (p.seen == seq_) {
      ++it;
      continue;
    }
    job->exited.push_back(InfoOf(it->first, p.ppid, std::move(p.comm), std::move(p.cmdline)));
    MembershipChanged();
    ReleaseAll(&p);
    it = procs_.erase(it);
  }
}

void ProcessTreeSource::ReadIo(double now_s, JobSample* job, std::vector<Notice>* notices) {
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  bool any = false;
  for (int pid : members_) {
    Proc& p = procs_.find(pid)->second;
    if (p.io_denied) continue;
    Status s = ReadHeld(&p.io_file, Path(pid, "io"), notices);
    if (!s.ok()) {
      p.io_read_bytes.reset();
      p.io_write_bytes.reset();
      if (s.code() != Status::Code::kPermissionDenied) continue;
      p.io_denied = true;
      if (!said_io_denied_) {
        said_io_denied_ = true;
        notices->push_back({kSourceName, s.message() +
                                             ": I/O of processes of other users is left out of "
                                             "job read/write rates"});
      }
      continue;
    }
    ProcIo io = ParseProcIo(buf_);
    if (p.io_read_bytes && p.io_write_bytes && io.read_bytes && io.write_bytes) {
      read_bytes += *io.read_bytes >= *p.io_read_bytes ? *io.read_bytes - *p.io_read_bytes : 0;
      write_bytes += *io.write_bytes >= *p.io_write_bytes ? *io.write_bytes - *p.io_write_bytes : 0;
      any = true;
    }
    p.io_read_bytes = io.read_bytes;
    p.io_write_bytes = io.write_bytes;
  }
  if (any && last_io_s_ && now_s > *last_io_s_) {
    double dt = now_s - *last_io_s_;
    job->read_bytes_per_second = static_cast<double>(read_bytes) / dt;
    job->write_bytes_per_second = static_cast<double>(write_bytes) / dt;
  }
  last_read_rate_ = job->read_bytes_per_second;
  last_write_rate_ = job->write_bytes_per_second;
  last_io_s_ = now_s;
}

void ProcessTreeSource::PssRound(double now_s, std::vector<Notice>* notices) {
  double cpu_before = options_.cpu_seconds();
  size_t with_pss = 0;
  size_t gone = 0;  // members that exited since the tree was read
  Status first_error;
  for (int pid : members_) {
    Proc& p = procs_.find(pid)->second;
    p.pss_bytes.reset();
    p.pss_anon_bytes.reset();
    if (p.pss_denied) continue;
    Status s = env_->ReadFile(Path(pid, "smaps_rollup"), &buf_);
    if (!s.ok()) {
      if (s.code() == Status::Code::kNotFound) {
        ++gone;
        continue;
      }
      if (s.code() == Status::Code::kPermissionDenied) p.pss_denied = true;
      if (first_error.ok()) first_error = std::move(s);
      continue;
    }
    SmapsRollup rollup = ParseSmapsRollup(buf_);
    if (!rollup.pss_bytes) continue;
    p.pss_bytes = rollup.pss_bytes;
    p.pss_anon_bytes = rollup.pss_anon_bytes;
    p.rss_at_pss_bytes = p.rss_bytes;
    ++with_pss;
  }
  pss_scheduler_.RoundDone(now_s, options_.cpu_seconds() - cpu_before, membership_changed_,
                           members_.size());
  membership_changed_ = false;
  memory_fell_ = false;
  rss_at_pss_round_bytes_ = rss_sum_bytes_;
  // Only members still there can say that PSS cannot be read.
  if (with_pss == 0 && members_.size() > gone && !said_no_pss_) {
    said_no_pss_ = true;
    std::string why =
        first_error.ok() ? "no Pss line in /proc/PID/smaps_rollup" : first_error.message();
    notices->push_back({kSourceName, "PSS unavailable (" + why +
                                         "): job memory_bytes is the RSS sum, shared pages "
                                         "counted in every process"});
  }
}

void ProcessTreeSource::NotePages(uint64_t start_code, bool known, Proc* p) {
  bool readable = start_code > 1;  // 0 or 1 where the kernel hides it
  if (!known) {
    auto parent = procs_.find(p->ppid);
    p->own_pages = readable && (parent == procs_.end() || parent->second.start_code != start_code);
  } else if (readable && p->start_code > 1 && start_code != p->start_code) {
    p->own_pages = true;  // it ran a new program: its last PSS is of the one it left
    MembershipChanged();
  }
  p->start_code = start_code;
}

void ProcessTreeSource::MembershipChanged() {
  if (!membership_changed_) changed_seq_ = seq_;
  membership_changed_ = true;
}

bool ProcessTreeSource::HasPss(int pid) const {
  auto it = procs_.find(pid);
  return it != procs_.end() && it->second.seen == seq_ && it->second.pss_bytes.has_value();
}

void ProcessTreeSource::Sum(double now_s, JobSample* job) {
  Fill(job);
  // The job's cgroup, read earlier in the tick, has the say on CPU.
  if (last_tick_s_ && now_s > *last_tick_s_ && !job->cpu_cores) {
    double ticks = static_cast<double>(std::max<int64_t>(cpu_delta_ticks_, 0));
    job->cpu_cores = ticks / ticks_per_second_ / (now_s - *last_tick_s_);
  }
  last_tick_s_ = now_s;
}

void ProcessTreeSource::Fill(JobSample* job) {
  Filled& f = filled_;
  f.threads = 0;
  f.rss_bytes = 0;
  f.memory_bytes = 0;
  f.anon_pss_bytes = 0;
  f.members.clear();
  for (int pid : members_) {
    const Proc& p = procs_.find(pid)->second;
    f.threads += static_cast<double>(p.threads);
    double p_rss = static_cast<double>(p.rss_bytes);
    f.rss_bytes += p_rss;
    double p_memory = 0;
    // Its anonymous part: RSS changes since the reading count to both.
    std::optional<double> p_anon = 0;
    if (p.pss_bytes) {
      double since = p_rss - static_cast<double>(p.rss_at_pss_bytes);
      p_memory = std::max(0.0, static_cast<double>(*p.pss_bytes) + since);
      p_anon = p.pss_anon_bytes
                   ? std::optional(std::max(0.0, static_cast<double>(*p.pss_anon_bytes) + since))
                   : std::nullopt;
    } else if (!p.pss_denied && !p.own_pages && HasPss(p.ppid)) {
      // A fresh fork: its RSS is its parent's pages, already counted there.
      // It counts from its first PSS reading, a tick or so away.
    } else {
      p_memory = p_rss;
      p_anon = p_rss;
    }
    f.memory_bytes += p_memory;
    if (!p_anon) f.anon_pss_bytes.reset();
    if (f.anon_pss_bytes) *f.anon_pss_bytes += *p_anon;
    f.members.push_back({pid, p.ppid, static_cast<double>(p.cpu_ticks) / ticks_per_second_, p_rss,
                         p_memory, p.zombie, p_anon});
  }
  f.pids.assign(members_.begin(), members_.end());
  std::sort(f.pids.begin(), f.pids.end());
  Publish(job);
}

void ProcessTreeSource::Publish(JobSample* job) const {
  job->processes = static_cast<double>(filled_.members.size());
  job->threads = filled_.threads;
  job->rss_bytes = filled_.rss_bytes;
  job->memory_bytes = filled_.memory_bytes;
  job->memory_anon_pss_bytes = filled_.anon_pss_bytes;
  job->members = filled_.members;
  job->pids = filled_.pids;
}

}  // namespace tv

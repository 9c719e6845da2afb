// ProcessTreeSource: the job's process tree (root PIDs and all their
// descendants) and what it uses: processes, threads, CPU cores busy, summed RSS,
// memory with shared pages counted once (PSS), storage I/O rates, and the
// processes that joined or left.
//
// Membership is found afresh every tick without scanning /proc: from each member
// it reads /proc/PID/task/PID/children (children of the main thread) — unless
// the host's last PID handed out (host.last_pid, from the load average source
// earlier in the tick) has not moved since the last tick: then nothing can have joined,
// and only the known members are read. A process
// forked by another thread is that thread's child, so every thread's children
// file is read too, every `thread_walk_interval_s` (2 s): such a process joins
// the tree within that time; a child of the main thread joins on its first tick.
// Once in the tree, a process stays counted until it exits, even if re-parented
// out of it (orphaned to a subreaper, daemonized). Processes are keyed by (pid,
// starttime), so a reused PID is a new process. A PID that vanishes mid-read is
// normal and not reported.
//
// CPU: the job's CPU time is each member's own time plus what it reaped
// (cutime + cstime, which grows when a member waits for a child), so children
// that lived between two ticks, never seen, still count. A member first seen
// after the first tick counts with all its time (at most the time since the
// last tick on each of its threads: one found late is not all this tick's); one that leaves takes
// its last seen time out of the total again when its nearest living ancestor is a member or the
// reaper (which then counts it in its reaped time), so nothing counts twice. The reaper
// (`reaper_pid`, by default this process: the supervisor, the job's subreaper) counts its reaped
// time when it is not itself a member. A tick that comes out negative (a child reaped between two
// reads) is carried into the next, for at most 10 ticks (a parent that ignores SIGCHLD has its
// children reaped without a trace in its usage).
//
// Memory: a member that turns zombie, or a fall of the tree's RSS sum by
// `rss_fall_ratio` since the last PSS round, asks for a PSS round as a
// membership change does: the pages the exited shared are now counted in full
// by the living, which the last round did not see.
//
// When the job has a cgroup of its own (job.cgroup_procs_digest, from
// sources/cgroup_usage.h earlier in the tick), that cgroup counts its CPU every
// tick, and the members' files are read only when its PID list changes, on
// the ticks after that until the PSS round it asks for, when its memory moves,
// and on row ticks (for large trees, one row in several: see ReadsFilesNow);
// between
// reads the job's process figures are those of the last read, and
// job.process_files_age_s says how old they are.
//
// Per tick it reads /proc/PID/stat of each member; on row ticks also
// /proc/PID/io; /proc/PID/cmdline once per new process (again after an
// exec changes its name); /proc/PID/smaps_rollup
// in rounds paced by PssScheduler (see pss.h). Between rounds memory_bytes is
// each member's PSS at the last round plus its RSS change since; a member
// without PSS (smaps_rollup unreadable: other user's process, old kernel)
// counts its RSS, except a fresh fork of a member with PSS, whose pages are its
// parent's: it counts 0 until the round a tick after it was seen. A fork is
// told from a program of its own by stat's startcode, which a fork shares
// with its parent and an exec sets anew: one that runs its own program counts
// its RSS until its PSS is read, and an exec seen asks for a round as a new
// member does. In steady state a tick allocates nothing.
//
// A member's stat, children (of its main thread) and io files are held open
// from its second tick until it leaves, and re-read through Env::OpenRereadable:
// that skips the path lookup of every open and close, and a held file refers to
// that very process, so a reused PID is never read through it. At most
// `max_held_files` are held; members beyond that are read by path. If opening
// fails for want of file descriptors, every held file is closed and the source
// reads by path from then on, so it never starves the rest of the process.
//
// Thread safety: not thread-safe; call from the sampler thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/env.h"
#include "core/source.h"
#include "sources/pss.h"

namespace tv {

struct ProcessTreeOptions {
  double thread_walk_interval_s = 2;
  PssPacing pss;
  long clock_ticks_per_second = 0;  // 0: sysconf(_SC_CLK_TCK)
  long page_size_bytes = 0;         // 0: sysconf(_SC_PAGESIZE)
  // CPU seconds of the calling thread; measures the cost of a PSS round.
  // Empty: ThreadCpuSeconds().
  std::function<double()> cpu_seconds;
  size_t expected_processes = 256;  // capacity reserved up front
  // Files held open between ticks (about 3 per process). Empty: a quarter of the
  // RLIMIT_NOFILE soft limit, at most 1024. 0: none, every read opens by path.
  std::optional<size_t> max_held_files;
  // The process that reaps the job's orphans and its root. Empty: getpid().
  std::optional<int> reaper_pid;
  // A fall of the RSS sum by this fraction since the last PSS round asks for one.
  double rss_fall_ratio = 0.2;
  // Never a member, nor its descendants: the monitor itself, when it watches
  // one of its own ancestors (`attach` to its shell). 0: none.
  int excluded_pid = 0;
};

class ProcessTreeSource final : public Source {
 public:
  // `roots`: the job's top processes (usually one: the training command; a
  // child subreaper supervisor may add the orphans it adopted).
  ProcessTreeSource(Env* env, std::vector<int> roots, ProcessTreeOptions options = {});

  // Replaces the roots. At the next tick the tree is found from them alone;
  // former members not found again are reported as exited.
  void SetRoots(std::vector<int> roots);

  std::string_view name() const override { return "process_tree"; }

  // Fills sample->job: processes, threads, rss_bytes, memory_bytes, pids,
  // started, exited every tick; cpu_cores from the second tick on; read/write
  // rates on row ticks, from the second row tick on. Leaves the job untouched
  // when there are no roots. A benchmark runs one tick on given roots with
  // SetRoots then Read.
  void Read(const Tick& tick, Sample* sample, std::vector<Notice>* notices) override;

 private:
  struct Proc {
    uint64_t start_ticks = 0;
    uint64_t seen = 0;  // the tick (seq_) it was last found in
    int ppid = 0;
    std::string comm;
    std::string cmdline;
    // Ticks left to read an empty cmdline again: exec sets the new name before
    // the new arguments, and a read between the two finds none.
    int cmdline_retries = 0;
    uint64_t cpu_ticks = 0;       // utime + stime at the last tick
    uint64_t children_ticks = 0;  // cutime + cstime at the last tick
    bool zombie = false;
    uint64_t rss_bytes = 0;
    uint64_t threads = 0;
    std::optional<uint64_t> io_read_bytes;  // at the last row tick
    std::optional<uint64_t> io_write_bytes;
    bool io_denied = false;
    std::optional<uint64_t> pss_bytes;       // at the last PSS round
    std::optional<uint64_t> pss_anon_bytes;  // ... its Pss_Anon + Pss_Shmem
    uint64_t rss_at_pss_bytes = 0;
    bool pss_denied = false;
    uint64_t start_code = 0;  // stat's startcode: a fork's is its parent's
    // Runs a program of its own (first seen with a startcode other than its
    // parent's, or seen exec): its pages are not its parent's.
    bool own_pages = false;
    // Held open between ticks; empty beyond the cap or before the second tick.
    std::unique_ptr<RereadableFile> stat_file;
    std::unique_ptr<RereadableFile> children_file;
    std::unique_ptr<RereadableFile> io_file;
  };
  enum class Via { kRoot, kChild, kKnown };
  struct Candidate {
    int pid;
    int parent;  // kChild: the listing member; kRoot: index in roots_
    Via via;
  };

  // `look`: read children files (something forked since the last tick);
  // `all_threads`: those of every thread, not only the main one.
  void Walk(bool look, bool all_threads, JobSample* job, std::vector<Notice>* notices);
  void Visit(const Candidate& c, bool look, bool all_threads, JobSample* job,
             std::vector<Notice>* notices);
  bool ReadStat(int pid, Proc* known, std::vector<Notice>* notices);
  // `p`: the member when tid is its main thread, else nullptr.
  void QueueChildren(int pid, int tid, Proc* p, std::vector<Notice>* notices);
  // Reads `path` into buf_ through *file, opening and holding it first while
  // under the cap, else by path. A held file whose read fails is closed.
  Status ReadHeld(std::unique_ptr<RereadableFile>* file, const char* path,
                  std::vector<Notice>* notices);
  void Release(std::unique_ptr<RereadableFile>* file);
  void ReleaseAll(Proc* p);
  void SweepExited(JobSample* job);
  // Whether the time of `p`, which left, is now in a reaper's reaped time that
  // this source counts: its nearest ancestor still here is a member or the reaper.
  bool ReapedInView(const Proc& p) const;
  void ReadReaper(std::vector<Notice>* notices);
  void ReadIo(double now_s, JobSample* job, std::vector<Notice>* notices);
  void PssRound(double now_s, std::vector<Notice>* notices);
  // Whether this tick reads the members' files: every tick unless the job's
  // own cgroup counts it (job.cgroup_procs_digest); then when its PID list
  // changes, while a PSS round is owed to a change of members, when memory
  // moved (MemorySignal) by kMemoryMoveBytes and
  // kMemoryMoveRatio since the last read, and on row ticks, every row for up
  // to kProcessesPerRowRead processes and one row in every
  // n / kProcessesPerRowRead beyond.
  bool ReadsFilesNow(const Tick& tick, const Sample& sample);
  // The memory charged to the job's cgroup (read each tick), else the host's
  // memory in use.
  static std::optional<double> MemorySignal(const Sample& sample);
  // The job's figures from the members as last read, and its CPU from them
  // unless the cgroup gave it.
  void Sum(double now_s, JobSample* job);
  // Fill: the members' figures as read this tick, kept in filled_ and
  // published; Publish: those kept, on a tick that reads no files (copies,
  // no lookup: such a tick costs the same whatever the tree's size).
  void Fill(JobSample* job);
  void Publish(JobSample* job) const;
  void MembershipChanged();
  // Whose pages `p` has, from its startcode this tick (`known`: seen before).
  void NotePages(uint64_t start_code, bool known, Proc* p);
  // Whether `pid` is a member this tick with a PSS reading.
  bool HasPss(int pid) const;
  const char* Path(int pid, const char* leaf);
  const char* TaskPath(int pid, int tid, const char* leaf);  // tid 0: /proc/PID/leaf

  Env* env_;
  std::vector<int> roots_;
  std::vector<std::optional<uint64_t>> root_starts_;
  ProcessTreeOptions options_;
  double ticks_per_second_;
  double page_size_bytes_;
  PssScheduler pss_scheduler_;

  std::unordered_map<int, Proc> procs_;
  struct Filled {
    double threads = 0;
    double rss_bytes = 0;
    double memory_bytes = 0;
    std::optional<double> anon_pss_bytes;  // absent where a PSS reading lacks Pss_Anon
    std::vector<ProcessUsage> members;     // in discovery order
    std::vector<int> pids;                 // sorted
  } filled_;
  std::vector<int> members_;       // this tick, in discovery order
  std::vector<int> prev_members_;  // last tick
  std::vector<Candidate> queue_;
  std::vector<int> kids_;
  std::vector<std::string> names_;
  std::string buf_;
  char path_[96];
  size_t max_held_files_;
  size_t held_files_ = 0;

  uint64_t seq_ = 0;
  bool forget_members_ = false;      // SetRoots: do not carry former members over
  bool membership_changed_ = false;  // since the last PSS round
  uint64_t changed_seq_ = 0;         // the tick that first saw that change
  bool baseline_walk_ = false;       // the first walk from the roots: time so far is not ours
  static constexpr int kMaxShortTicks = 10;
  static constexpr int kCmdlineRetries = 3;
  int64_t cpu_delta_ticks_ = 0;  // this tick; negative carried into the next
  int short_ticks_ = 0;          // ticks it has been negative
  double tick_dt_s_ = 0;         // since the last tick
  int reaper_pid_ = 0;
  std::optional<uint64_t> reaper_children_ticks_;  // last tick; empty: not read
  bool reaper_read_ = false;                       // read this tick and the one before
  std::unique_ptr<RereadableFile> reaper_stat_;
  double rss_sum_bytes_ = 0;           // this tick
  double rss_at_pss_round_bytes_ = 0;  // the RSS sum at the last PSS round
  bool memory_fell_ = false;           // a zombie or a fall of RSS since the last round
  std::optional<double> last_tick_s_;
  std::optional<double> last_walk_s_;
  std::optional<uint64_t> last_forks_;     // host.last_pid at the last tick
  std::optional<uint64_t> forks_at_walk_;  // ... at the last all-threads walk
  std::optional<double> last_io_s_;
  std::optional<double> last_read_rate_;  // job rates at the last read of the io files
  std::optional<double> last_write_rate_;
  static constexpr size_t kProcessesPerRowRead = 32;
  static constexpr double kMemoryMoveBytes = 16 * 1024 * 1024;
  static constexpr double kMemoryMoveRatio = 0.05;
  std::optional<double> memory_at_read_;  // MemorySignal at the last read
  size_t rows_since_read_ = 0;
  std::optional<uint64_t> last_digest_;  // job.cgroup_procs_digest at the last read
  bool said_no_children_ = false;
  bool said_io_denied_ = false;
  bool said_no_pss_ = false;
  bool said_fds_short_ = false;
};

}  // namespace tv

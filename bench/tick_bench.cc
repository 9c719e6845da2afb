// One sampler tick over the host and a 64-process tree, beside a bare loop that
// reads exactly the same files (recorded from the tick itself) by open, read and
// close, and does nothing else; and beside the same loop reading the files the
// tick holds open through held descriptors, the floor of the tick's own way.
//
//   build/release/trainvitals_bench --benchmark_filter=Tick
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"
#include "sources/host_sources.h"
#include "sources/process_tree.h"

namespace tv {
namespace {

constexpr int kTreeSize = 64;

// Forks kTreeSize-1 children that wait for a signal; the bench process is the root.
class Tree {
 public:
  Tree() {
    for (int i = 0; i < kTreeSize - 1; ++i) {
      pid_t pid = ::fork();
      if (pid == 0) {
        ::pause();
        _exit(0);
      }
      kids_.push_back(pid);
    }
  }
  ~Tree() {
    for (pid_t pid : kids_) ::kill(pid, SIGKILL);
    for (pid_t pid : kids_) ::waitpid(pid, nullptr, 0);
  }

 private:
  std::vector<pid_t> kids_;
};

Tree& TheTree() {
  static Tree tree;
  return tree;
}

// Passes reads through to the real file system and remembers the paths read,
// by path or through a held handle.
class RecordingEnv final : public Env {
 public:
  Status ReadFile(const char* path, std::string* out) override {
    if (recording) {
      paths.emplace_back(path);
      held.push_back(false);
    }
    return real.ReadFile(path, out);
  }
  Status OpenRereadable(const char* path, std::unique_ptr<RereadableFile>* out) override {
    std::unique_ptr<RereadableFile> file;
    Status s = real.OpenRereadable(path, &file);
    if (s.ok()) *out = std::make_unique<Recording>(this, path, std::move(file));
    return s;
  }
  Status ListDir(const char* path, std::vector<std::string>* names) override {
    if (recording) dirs.emplace_back(path);
    return real.ListDir(path, names);
  }
  PosixEnv real;
  bool recording = false;
  std::vector<std::string> paths;
  std::vector<bool> held;  // per path: read through a held handle
  std::vector<std::string> dirs;

 private:
  class Recording final : public RereadableFile {
   public:
    Recording(RecordingEnv* env, const char* path, std::unique_ptr<RereadableFile> file)
        : env_(env), path_(path), file_(std::move(file)) {}
    Status Read(std::string* out) override {
      if (env_->recording) {
        env_->paths.push_back(path_);
        env_->held.push_back(true);
      }
      return file_->Read(out);
    }

   private:
    RecordingEnv* env_;
    std::string path_;
    std::unique_ptr<RereadableFile> file_;
  };
};

struct Monitor {
  explicit Monitor(Env* env) : sources(MakeHostSources(env, 0)) {
    sources.push_back(std::make_unique<ProcessTreeSource>(env, std::vector<int>{::getpid()}));
  }
  void Step(double t, bool row) {
    tv::Tick tick{t, row};
    sample.host = HostSample{};
    sample.job = JobSample{};
    notices.clear();
    for (auto& s : sources) s->Read(tick, &sample, &notices);
  }
  std::vector<std::unique_ptr<Source>> sources;
  Sample sample;
  std::vector<Notice> notices;
};

// Records the files of one row tick after warming up, on a tick without a PSS
// round (rounds are paced to about 0.05% of a core: some 50 us per 10 Hz tick,
// which BM_TickRow includes and the bare loops leave out), so every repetition
// of a bare loop reads the same files.
void RecordRowTick(RecordingEnv* env, Monitor* m) {
  double t = 0;
  for (int i = 0; i < 30; ++i) m->Step(t += 0.1, true);
  for (int i = 0; i < 100; ++i) {
    env->paths.clear();
    env->held.clear();
    env->dirs.clear();
    env->recording = true;
    m->Step(t += 0.1, true);
    env->recording = false;
    bool pss_round = std::any_of(env->paths.begin(), env->paths.end(),
                                 [](const std::string& p) { return p.ends_with("/smaps_rollup"); });
    if (!pss_round) return;
  }
}

// A row tick: every file a tick ever reads (host, cgroup, per process stat,
// children and io), as happens once per second.
void BM_TickRow(benchmark::State& state) {
  TheTree();
  Monitor m(Env::Default());
  double t = 0;
  for (int i = 0; i < 30; ++i) m.Step(t += 0.1, true);  // warm up: state, PSS round
  for (auto _ : state) m.Step(t += 0.1, true);
  state.counters["processes"] = m.sample.job.processes.value_or(0);
}
BENCHMARK(BM_TickRow)->Unit(benchmark::kMicrosecond);

// Ticks as they come at 10 Hz: nine plain ticks and one row tick per second, with
// the 2 s thread walk and the paced PSS rounds falling where they fall.
void BM_TickSteady(benchmark::State& state) {
  TheTree();
  Monitor m(Env::Default());
  double t = 0;
  int64_t k = 0;
  for (int i = 0; i < 30; ++i, ++k) m.Step(t += 0.1, k % 10 == 9);
  for (auto _ : state) {
    m.Step(t += 0.1, k % 10 == 9);
    ++k;
  }
}
BENCHMARK(BM_TickSteady)->Unit(benchmark::kMicrosecond);

// Open, read and close exactly the files of one row tick, those the tick read
// through held handles included; no parsing.
void BM_BareReadsOfARowTick(benchmark::State& state) {
  TheTree();
  RecordingEnv env;
  Monitor m(&env);
  RecordRowTick(&env, &m);
  std::vector<std::string> paths = env.paths;
  char buf[16384];
  for (auto _ : state) {
    for (const std::string& p : paths) {
      int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      while (::read(fd, buf, sizeof(buf)) > 0) {
      }
      ::close(fd);
    }
  }
  state.counters["files"] = static_cast<double>(paths.size());
  state.counters["held_by_tick"] =
      static_cast<double>(std::count(env.held.begin(), env.held.end(), true));
  state.counters["dirs_listed"] = static_cast<double>(env.dirs.size());
}
BENCHMARK(BM_BareReadsOfARowTick)->Unit(benchmark::kMicrosecond);

// The floor of a row tick as the source reads it: pread until end of file on
// descriptors held open for the files the tick held, open, read and close for
// the rest; no parsing.
void BM_BareHeldReadsOfARowTick(benchmark::State& state) {
  TheTree();
  RecordingEnv env;
  Monitor m(&env);
  RecordRowTick(&env, &m);
  std::vector<int> fds;  // -1: read by path
  for (size_t i = 0; i < env.paths.size(); ++i) {
    fds.push_back(env.held[i] ? ::open(env.paths[i].c_str(), O_RDONLY | O_CLOEXEC) : -1);
  }
  char buf[16384];
  for (auto _ : state) {
    for (size_t i = 0; i < env.paths.size(); ++i) {
      if (fds[i] >= 0) {
        off_t off = 0;
        for (ssize_t n; (n = ::pread(fds[i], buf, sizeof(buf), off)) > 0;) off += n;
        continue;
      }
      int fd = ::open(env.paths[i].c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      while (::read(fd, buf, sizeof(buf)) > 0) {
      }
      ::close(fd);
    }
  }
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
  state.counters["files"] = static_cast<double>(env.paths.size());
}
BENCHMARK(BM_BareHeldReadsOfARowTick)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tv

BENCHMARK_MAIN();

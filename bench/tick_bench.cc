// One sampler tick over the host and a 64-process tree, beside a bare loop that
// reads exactly the same files (recorded from the tick itself) and does nothing
// else. The ratio of the two is the cost of our parsing and bookkeeping.
//
//   build/release/trainvitals_bench --benchmark_filter=Tick
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

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

// Passes reads through to the real file system and remembers the paths.
class RecordingEnv final : public Env {
 public:
  Status ReadFile(const char* path, std::string* out) override {
    if (recording) paths.emplace_back(path);
    return real.ReadFile(path, out);
  }
  Status ListDir(const char* path, std::vector<std::string>* names) override {
    if (recording) dirs.emplace_back(path);
    return real.ListDir(path, names);
  }
  PosixEnv real;
  bool recording = false;
  std::vector<std::string> paths;
  std::vector<std::string> dirs;
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

// Open, read and close exactly the files of one row tick; no parsing.
void BM_BareReadsOfARowTick(benchmark::State& state) {
  TheTree();
  RecordingEnv env;
  Monitor m(&env);
  double t = 0;
  for (int i = 0; i < 30; ++i) m.Step(t += 0.1, true);
  env.recording = true;
  m.Step(t += 0.1, true);
  env.recording = false;
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
  state.counters["dirs_listed"] = static_cast<double>(env.dirs.size());
}
BENCHMARK(BM_BareReadsOfARowTick)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tv

BENCHMARK_MAIN();

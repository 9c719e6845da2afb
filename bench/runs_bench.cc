// The run history over 10,000 indexed runs (target: `trainvitals runs` and
// `trainvitals runs stats` answer in at most 100 ms): the query and the
// formatting of the default view (the newest kDefaultView runs, each checked
// for its directory), and of the stats over every run with its findings.
// The database is filled once per process, in a temporary directory.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "store/run_index.h"
#include "views/runs_table.h"

namespace tv {
namespace {

constexpr int kRuns = 10'000;
constexpr int64_t kDefaultView = 30;  // `trainvitals runs` without --limit

const char* const kFindingIds[] = {"input-bound", "gpu-idle", "memory-leak", "cpu-bound",
                                   "low-gpu-memory-use"};

// A temporary directory, removed at exit.
struct BenchDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / fmt::format("tv_bench_runs_{}", ::getpid());
  BenchDir() { std::filesystem::create_directories(path); }
  ~BenchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// The path of a database holding kRuns runs, made on first use.
const std::string& FilledDb() {
  static BenchDir bench_dir;
  static const std::string path = [] {
    const std::filesystem::path& dir = bench_dir.path;
    std::string db = (dir / "runs.db").string();
    std::string error;
    std::unique_ptr<RunIndex> index = RunIndex::Open(db, &error);
    if (!index) throw std::runtime_error(error);
    for (int i = 0; i < kRuns; ++i) {
      RunRecord r;
      r.run_dir = (dir / fmt::format("20261130-{:06}-job{}", i, i % 97)).string();
      r.name = fmt::format("job{}", i % 97);
      r.command_json = fmt::format(R"(["python","train.py","--seed","{}"])", i);
      r.command = fmt::format("python train.py --seed {}", i);
      r.host = fmt::format("node{}", i % 16);
      r.start_t = 1.79e9 + i * 600.0;
      r.duration_s = 300 + (i % 50) * 60;
      r.end_t = *r.start_t + *r.duration_s;
      r.exit_code = i % 20 == 0 ? 1 : 0;
      r.gpu_count = 1 << (i % 4);
      r.gpu_models = "NVIDIA H100 80GB HBM3";
      r.gpu_hours = *r.duration_s / 3600 * r.gpu_count;
      r.busy_ratio = (i % 100) / 100.0;
      r.busy_gpu_hours = *r.gpu_hours * *r.busy_ratio;
      r.wasted_gpu_hours = *r.gpu_hours - *r.busy_gpu_hours;
      r.energy_kwh = *r.gpu_hours * 0.7;
      r.co2e_kg = *r.energy_kwh * 0.475;
      r.health_score = 40 + i % 60;
      for (int f = 0; f < i % 4; ++f) r.findings.push_back({kFindingIds[(i + f) % 5], "warning"});
      if (!index->Put(r, &error)) throw std::runtime_error(error);
    }
    return db;
  }();
  return path;
}

void BM_RunsDefaultView(benchmark::State& state) {
  const std::string& db = FilledDb();
  for (auto _ : state) {
    std::string error;
    std::unique_ptr<RunIndex> index = RunIndex::Open(db, &error);
    RunQuery q;
    q.limit = kDefaultView;
    std::vector<RunRecord> runs;
    if (!index || !index->Query(q, &runs, &error)) state.SkipWithError(error.c_str());
    benchmark::DoNotOptimize(FormatRunsTable(runs));
  }
}
BENCHMARK(BM_RunsDefaultView)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_RunsSortedByWaste(benchmark::State& state) {
  const std::string& db = FilledDb();
  for (auto _ : state) {
    std::string error;
    std::unique_ptr<RunIndex> index = RunIndex::Open(db, &error);
    RunQuery q;
    q.sort = "wasted_gpu_hours";
    q.name_glob = "job1*";
    q.limit = kDefaultView;
    std::vector<RunRecord> runs;
    if (!index || !index->Query(q, &runs, &error)) state.SkipWithError(error.c_str());
    benchmark::DoNotOptimize(FormatRunsTable(runs));
  }
}
BENCHMARK(BM_RunsSortedByWaste)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_RunsStats(benchmark::State& state) {
  const std::string& db = FilledDb();
  for (auto _ : state) {
    std::string error;
    std::unique_ptr<RunIndex> index = RunIndex::Open(db, &error);
    RunQuery q;
    q.with_findings = true;
    q.check_missing = false;
    q.stats_only = true;
    q.sort.clear();
    std::vector<RunRecord> runs;
    if (!index || !index->Query(q, &runs, &error)) state.SkipWithError(error.c_str());
    benchmark::DoNotOptimize(FormatRunStats(ComputeRunStats(runs)));
  }
}
BENCHMARK(BM_RunsStats)->Unit(benchmark::kMillisecond)->UseRealTime();

// The run history on PostgreSQL, when TRAINVITALS_BENCH_POSTGRES names a
// database (bench/history_postgres.py starts a server and sets it): what a
// run's end pays to index itself, connecting included, and the upsert alone.
const char* PostgresUrl() { return std::getenv("TRAINVITALS_BENCH_POSTGRES"); }

RunRecord BenchRun(int i) {
  RunRecord r;
  r.run_dir = fmt::format("/bench/one/20261130-{:06}-train", i);
  r.name = "train";
  r.command_json = R"(["python","train.py"])";
  r.command = "python train.py";
  r.host = "node1";
  r.start_t = 1.79e9 + i;
  r.duration_s = 600;
  r.gpu_count = 8;
  r.gpu_hours = 8.0 / 6;
  r.findings = {{"input-bound", "warning"}, {"gpu-idle", "critical"}};
  return r;
}

void BM_PostgresOpenAndPut(benchmark::State& state) {
  if (PostgresUrl() == nullptr) return state.SkipWithError("TRAINVITALS_BENCH_POSTGRES unset");
  int i = 0;
  for (auto _ : state) {
    std::string error;
    std::unique_ptr<RunIndex> index = RunIndex::Open(PostgresUrl(), &error);
    if (!index || !index->Put(BenchRun(i++ % 100), &error)) state.SkipWithError(error.c_str());
  }
}
BENCHMARK(BM_PostgresOpenAndPut)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PostgresPut(benchmark::State& state) {
  if (PostgresUrl() == nullptr) return state.SkipWithError("TRAINVITALS_BENCH_POSTGRES unset");
  std::string error;
  std::unique_ptr<RunIndex> index = RunIndex::Open(PostgresUrl(), &error);
  if (!index) return state.SkipWithError(error.c_str());
  int i = 0;
  for (auto _ : state) {
    if (!index->Put(BenchRun(i++ % 100), &error)) state.SkipWithError(error.c_str());
  }
}
BENCHMARK(BM_PostgresPut)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tv

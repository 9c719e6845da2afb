// gpu_watch: GpuSource alone at 10 Hz, one JSON row per second keyed by the
// metric table (as samples.jsonl's gpus[] is), for checking the NVML backend
// on a real GPU where the full CLI is not built. The job is the process tree
// under `root_pid` (found by scanning /proc each tick).
//   gpu_watch SECONDS OUT.jsonl PROBE.json [ROOT_PID]
#include <dirent.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "core/aggregator.h"
#include "core/metrics.h"
#include "sources/gpu_probe.h"
#include "sources/gpu_source.h"

namespace {

double Mono() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}
double Wall() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

std::vector<int> Tree(int root) {
  std::map<int, int> parent;
  DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) {
    int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string s((std::istreambuf_iterator<char>(in)), {});
    size_t close = s.rfind(')');
    if (close == std::string::npos) continue;
    int ppid = 0;
    std::sscanf(s.c_str() + close + 2, "%*c %d", &ppid);
    parent[pid] = ppid;
  }
  if (d) closedir(d);
  std::vector<int> tree;
  for (auto [pid, ppid] : parent) {
    for (int p = pid; p > 1; p = parent.count(p) ? parent[p] : 0) {
      if (p == root) {
        tree.push_back(pid);
        break;
      }
    }
  }
  return tree;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: gpu_watch SECONDS OUT.jsonl PROBE.json [ROOT_PID]\n");
    return 2;
  }
  double seconds = std::atof(argv[1]);
  int root = argc > 4 ? std::atoi(argv[4]) : 0;
  tv::GpuSourceOptions options = tv::GpuSourceOptions::FromEnvironment();
  std::ofstream(argv[3]) << tv::ProbeGpus(options).dump(2) << "\n";

  std::vector<tv::Notice> notices;
  auto source = tv::GpuSource::Create(options, &notices);
  std::ofstream out(argv[2]);
  for (const auto& n : notices)
    std::fprintf(stderr, "%s: %s\n", n.source.c_str(), n.message.c_str());
  if (source == nullptr) return 1;
  out << nlohmann::json{{"meta", source->static_info()}}.dump() << "\n";
  tv::Aggregator agg;
  double start = Mono();
  double tick_cost_s = 0;
  int ticks = 0;
  for (int k = 0; Mono() - start < seconds; ++k) {
    double due = start + k * 0.1;
    double now = Mono();
    if (due > now) std::this_thread::sleep_for(std::chrono::duration<double>(due - now));
    tv::Sample sample;
    sample.t = Wall();
    if (root > 0) sample.job.pids = Tree(root);
    tv::Tick tick;
    tick.mono_s = Mono();
    tick.row_tick = (k + 1) % 10 == 0;
    double t0 = Mono();
    source->Read(tick, &sample, &notices);
    tick_cost_s += Mono() - t0;
    ++ticks;
    agg.Add(sample);
    for (const auto& n : notices)
      std::fprintf(stderr, "%s: %s\n", n.source.c_str(), n.message.c_str());
    notices.clear();
    if (!tick.row_tick) continue;
    tv::Row row = agg.Take(Wall(), Mono() - start);
    nlohmann::json j = {{"t", row.t}, {"elapsed_s", row.elapsed_s}};
    nlohmann::json gpus = nlohmann::json::array();
    auto metrics = tv::GpuMetrics();
    for (const tv::GpuRow& g : row.gpus) {
      nlohmann::json o = {{"index", g.index}, {"physical_index", g.physical_index}};
      if (g.mig_instance >= 0) o["mig"] = g.mig_instance;
      for (size_t i = 0; i < metrics.size(); ++i) {
        if (!g.values[i]) continue;
        o[std::string(metrics[i].name)] = g.values[i]->mean;
        if (metrics[i].keep_max) o[std::string(metrics[i].name) + "_max"] = g.values[i]->max;
      }
      gpus.push_back(std::move(o));
    }
    j["gpus"] = std::move(gpus);
    j["gpu_tick_cost_us"] = tick_cost_s / ticks * 1e6;
    out << j.dump() << "\n" << std::flush;
  }
  return 0;
}

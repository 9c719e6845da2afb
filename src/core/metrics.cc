#include "core/metrics.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace tv {
namespace {

#define HOST(field) [](const Sample& s) -> std::optional<double> { return s.host.field; }
#define JOB(field) [](const Sample& s) -> std::optional<double> { return s.job.field; }
#define TRAINING(field) [](const Sample& s) -> std::optional<double> { return s.training.field; }

constexpr std::array kSampleMetrics = {
    MetricDef{Scope::kHost, "cpu_util_ratio", Unit::kRatio, Kind::kGauge, true,
              "Busy fraction of all host CPUs over the row (/proc/stat, read once a row: the "
              "max is the row's value).",
              HOST(cpu_util_ratio)},
    MetricDef{Scope::kHost, "cpu_iowait_ratio", Unit::kRatio, Kind::kGauge, false,
              "Share of CPU time idle while a task waited for storage (/proc/stat iowait).",
              HOST(cpu_iowait_ratio)},
    MetricDef{Scope::kHost, "cpu_limit_cores", Unit::kCores, Kind::kGauge, false,
              "CPU cores the job may use: the cgroup cpu.max quota, else the CPUs online.",
              HOST(cpu_limit_cores)},
    MetricDef{Scope::kHost, "memory_total_bytes", Unit::kBytes, Kind::kGauge, false,
              "Host memory (MemTotal).", HOST(memory_total_bytes)},
    MetricDef{Scope::kHost, "memory_used_bytes", Unit::kBytes, Kind::kGauge, true,
              "Host memory in use: MemTotal - MemAvailable (/proc/meminfo, read once a row; the "
              "job's own memory is read at every tick).",
              HOST(memory_used_bytes)},
    MetricDef{Scope::kHost, "memory_available_bytes", Unit::kBytes, Kind::kGauge, false,
              "Host memory available for new allocations (MemAvailable).",
              HOST(memory_available_bytes)},
    MetricDef{Scope::kHost, "memory_limit_bytes", Unit::kBytes, Kind::kGauge, false,
              "Memory the job may use: the tightest cgroup memory limit, else MemTotal.",
              HOST(memory_limit_bytes)},
    MetricDef{Scope::kHost, "swap_total_bytes", Unit::kBytes, Kind::kGauge, false,
              "Swap space (SwapTotal).", HOST(swap_total_bytes)},
    MetricDef{Scope::kHost, "swap_used_bytes", Unit::kBytes, Kind::kGauge, true,
              "Swap in use: SwapTotal - SwapFree.", HOST(swap_used_bytes)},
    MetricDef{Scope::kHost, "load1", Unit::kNone, Kind::kGauge, false, "1-minute load average.",
              HOST(load1)},
    MetricDef{Scope::kHost, "load5", Unit::kNone, Kind::kGauge, false, "5-minute load average.",
              HOST(load5)},
    MetricDef{Scope::kHost, "load15", Unit::kNone, Kind::kGauge, false, "15-minute load average.",
              HOST(load15)},
    MetricDef{Scope::kHost, "disk_read_bytes_per_second", Unit::kBytesPerSecond, Kind::kGauge, true,
              "Bytes read from whole disks (partitions excluded).",
              HOST(disk_read_bytes_per_second)},
    MetricDef{Scope::kHost, "disk_write_bytes_per_second", Unit::kBytesPerSecond, Kind::kGauge,
              true, "Bytes written to whole disks (partitions excluded).",
              HOST(disk_write_bytes_per_second)},
    MetricDef{Scope::kHost, "net_rx_bytes_per_second", Unit::kBytesPerSecond, Kind::kGauge, true,
              "Bytes received on all interfaces but loopback.", HOST(net_rx_bytes_per_second)},
    MetricDef{Scope::kHost, "net_tx_bytes_per_second", Unit::kBytesPerSecond, Kind::kGauge, true,
              "Bytes sent on all interfaces but loopback.", HOST(net_tx_bytes_per_second)},
    MetricDef{Scope::kHost, "cgroup_memory_current_bytes", Unit::kBytes, Kind::kGauge, true,
              "Memory charged to the job's cgroup (memory.current).",
              HOST(cgroup_memory_current_bytes)},
    MetricDef{Scope::kHost, "cpu_power_watts", Unit::kWatts, Kind::kGauge, true,
              "CPU package power from RAPL, summed over packages.", HOST(cpu_power_watts)},
    MetricDef{Scope::kHost, "cpu_energy_joules", Unit::kJoules, Kind::kCounter, false,
              "CPU package energy from RAPL since monitoring began.", HOST(cpu_energy_joules)},
    MetricDef{Scope::kHost, "run_dir_free_bytes", Unit::kBytes, Kind::kGauge, false,
              "Space an unprivileged writer can still use on the file system of the run "
              "directory (statvfs f_bavail * f_frsize).",
              HOST(run_dir_free_bytes)},
    MetricDef{Scope::kHost, "run_dir_size_bytes", Unit::kBytes, Kind::kGauge, false,
              "Size of the file system holding the run directory (statvfs f_blocks * f_frsize).",
              HOST(run_dir_size_bytes)},
    MetricDef{Scope::kJob, "processes", Unit::kCount, Kind::kGauge, true,
              "Processes in the job's tree.", JOB(processes)},
    MetricDef{Scope::kJob, "threads", Unit::kCount, Kind::kGauge, true,
              "Threads summed over the job's tree.", JOB(threads)},
    MetricDef{Scope::kJob, "cpu_cores", Unit::kCores, Kind::kGauge, true,
              "CPU time of the job per second of wall time: cores busy, may exceed 1. From the "
              "job's own cgroup where it has one (counting every process that lived in it), "
              "else summed over the tree's /proc/PID/stat.",
              JOB(cpu_cores)},
    MetricDef{Scope::kJob, "cpu_util_ratio", Unit::kRatio, Kind::kGauge, true,
              "job.cpu_cores over host.cpu_limit_cores.", JOB(cpu_util_ratio)},
    MetricDef{Scope::kJob, "rss_bytes", Unit::kBytes, Kind::kGauge, true,
              "Resident memory summed over the tree, as ps adds it up (shared pages counted "
              "in every process).",
              JOB(rss_bytes)},
    MetricDef{Scope::kJob, "memory_bytes", Unit::kBytes, Kind::kGauge, true,
              "The tree's memory with shared pages counted once (PSS, refreshed on a CPU "
              "budget, RSS changes added in between).",
              JOB(memory_bytes), nullptr, nullptr, /*keep_min=*/true},
    MetricDef{Scope::kJob, "memory_anon_pss_bytes", Unit::kBytes, Kind::kGauge, true,
              "The anonymous and shared-memory part of job.memory_bytes (Pss_Anon + Pss_Shmem "
              "where the kernel has them): what the job allocated, which another process "
              "leaving the libraries it maps cannot move. The leak rule reads it.",
              JOB(memory_anon_pss_bytes), nullptr, nullptr, /*keep_min=*/true},
    MetricDef{Scope::kJob, "memory_util_ratio", Unit::kRatio, Kind::kGauge, true,
              "job.memory_bytes over host.memory_limit_bytes.", JOB(memory_util_ratio)},
    MetricDef{Scope::kJob, "read_bytes_per_second", Unit::kBytesPerSecond, Kind::kGauge, true,
              "Storage bytes read by the tree (/proc/PID/io read_bytes).",
              JOB(read_bytes_per_second)},
    MetricDef{Scope::kJob, "write_bytes_per_second", Unit::kBytesPerSecond, Kind::kGauge, true,
              "Storage bytes written by the tree (/proc/PID/io write_bytes).",
              JOB(write_bytes_per_second)},
    MetricDef{Scope::kJob, "memory_anon_bytes", Unit::kBytes, Kind::kGauge, false,
              "Anonymous memory charged to the job's own cgroup at the row's end (memory.stat "
              "anon, v1 total_rss): what the job allocated, swapped out only.",
              JOB(memory_anon_bytes)},
    MetricDef{Scope::kJob, "memory_file_bytes", Unit::kBytes, Kind::kGauge, false,
              "Page cache charged to the job's own cgroup at the row's end (memory.stat file, v1 "
              "total_cache): reclaimable under pressure.",
              JOB(memory_file_bytes)},
    MetricDef{Scope::kJob, "cpu_pressure_ratio", Unit::kRatio, Kind::kGauge, false,
              "Share of the row's time at least one of the job's tasks waited for a CPU (PSI "
              "some, the job cgroup's cpu.pressure).",
              JOB(cpu_pressure_ratio)},
    MetricDef{Scope::kJob, "memory_pressure_ratio", Unit::kRatio, Kind::kGauge, false,
              "Share of the row's time at least one of the job's tasks stalled on memory: "
              "reclaim, swap-in, refaults (PSI some, memory.pressure).",
              JOB(memory_pressure_ratio)},
    MetricDef{Scope::kJob, "io_pressure_ratio", Unit::kRatio, Kind::kGauge, false,
              "Share of the row's time at least one of the job's tasks waited for storage I/O "
              "(PSI some, io.pressure).",
              JOB(io_pressure_ratio)},
    MetricDef{Scope::kJob, "process_files_age_seconds", Unit::kSeconds, Kind::kGauge, true,
              "Age of the per-process figures (processes, threads, rss_bytes, memory_bytes): "
              "seconds since the processes' own files were read; 0 when read at this sample.",
              JOB(process_files_age_s)},
    MetricDef{Scope::kTraining, "steps", Unit::kCount, Kind::kCounter, false,
              "Training steps taken (markers), by the process furthest along.", TRAINING(steps)},
    MetricDef{Scope::kTraining, "step", Unit::kCount, Kind::kState, false,
              "The highest step number the training processes gave (markers).", TRAINING(step)},
    MetricDef{Scope::kTraining, "steps_per_second", Unit::kNone, Kind::kGauge, true,
              "Training steps per second (markers), by the process furthest along.",
              TRAINING(steps_per_second)},
    MetricDef{Scope::kTraining, "data_wait_ratio", Unit::kRatio, Kind::kGauge, true,
              "Share of time the training processes waited for their next batch (markers: "
              "wait_begin/wait_end, m.data()), the mean over those that time it; absent when "
              "none does.",
              TRAINING(data_wait_ratio)},
    MetricDef{Scope::kTraining, "epoch", Unit::kCount, Kind::kState, false,
              "The current (or last) epoch of the lowest rank (markers).", TRAINING(epoch)},
    MetricDef{Scope::kTraining, "markers_malformed", Unit::kCount, Kind::kCounter, false,
              "Marker datagrams ignored as malformed since the start.",
              TRAINING(markers_malformed)},
};

#undef HOST
#undef JOB
#undef TRAINING

}  // namespace

std::span<const MetricDef> SampleMetrics() { return kSampleMetrics; }

namespace metric {
constexpr MetricId kHostMemoryUsedBytes =
    ResolveMetric(kSampleMetrics, false, Scope::kHost, "memory_used_bytes");
constexpr MetricId kHostMemoryLimitBytes =
    ResolveMetric(kSampleMetrics, false, Scope::kHost, "memory_limit_bytes");
constexpr MetricId kHostMemoryAvailableBytes =
    ResolveMetric(kSampleMetrics, false, Scope::kHost, "memory_available_bytes");
constexpr MetricId kHostCgroupMemoryCurrentBytes =
    ResolveMetric(kSampleMetrics, false, Scope::kHost, "cgroup_memory_current_bytes");
constexpr MetricId kHostCpuUtilRatio =
    ResolveMetric(kSampleMetrics, false, Scope::kHost, "cpu_util_ratio");
constexpr MetricId kHostCpuLimitCores =
    ResolveMetric(kSampleMetrics, false, Scope::kHost, "cpu_limit_cores");
constexpr MetricId kJobRssBytes = ResolveMetric(kSampleMetrics, false, Scope::kJob, "rss_bytes");
constexpr MetricId kJobCpuCores = ResolveMetric(kSampleMetrics, false, Scope::kJob, "cpu_cores");
constexpr MetricId kJobMemoryBytes =
    ResolveMetric(kSampleMetrics, false, Scope::kJob, "memory_bytes");
constexpr MetricId kJobMemoryAnonPssBytes =
    ResolveMetric(kSampleMetrics, false, Scope::kJob, "memory_anon_pss_bytes");
constexpr MetricId kJobProcesses = ResolveMetric(kSampleMetrics, false, Scope::kJob, "processes");
constexpr MetricId kTrainingEpoch = ResolveMetric(kSampleMetrics, false, Scope::kTraining, "epoch");
constexpr MetricId kTrainingStep = ResolveMetric(kSampleMetrics, false, Scope::kTraining, "step");
constexpr MetricId kTrainingSteps = ResolveMetric(kSampleMetrics, false, Scope::kTraining, "steps");
constexpr MetricId kHostCpuIowaitRatio =
    ResolveMetric(kSampleMetrics, false, Scope::kHost, "cpu_iowait_ratio");
constexpr MetricId kHostSwapUsedBytes =
    ResolveMetric(kSampleMetrics, false, Scope::kHost, "swap_used_bytes");
constexpr MetricId kHostCpuEnergyJoules =
    ResolveMetric(kSampleMetrics, false, Scope::kHost, "cpu_energy_joules");
constexpr MetricId kJobCpuPressureRatio =
    ResolveMetric(kSampleMetrics, false, Scope::kJob, "cpu_pressure_ratio");
constexpr MetricId kJobIoPressureRatio =
    ResolveMetric(kSampleMetrics, false, Scope::kJob, "io_pressure_ratio");
constexpr MetricId kJobCpuUtilRatio =
    ResolveMetric(kSampleMetrics, false, Scope::kJob, "cpu_util_ratio");
constexpr MetricId kJobMemoryUtilRatio =
    ResolveMetric(kSampleMetrics, false, Scope::kJob, "memory_util_ratio");
constexpr MetricId kTrainingStepsPerSecond =
    ResolveMetric(kSampleMetrics, false, Scope::kTraining, "steps_per_second");
constexpr MetricId kTrainingDataWaitRatio =
    ResolveMetric(kSampleMetrics, false, Scope::kTraining, "data_wait_ratio");
}  // namespace metric

const MetricDef& Def(MetricId id) {
  return id.gpu ? GpuMetrics()[id.index] : SampleMetrics()[id.index];
}

std::optional<Stat> FindStat(MetricId id, const std::vector<std::optional<Stat>>& values) {
  return id.index < values.size() ? values[id.index] : std::nullopt;
}

std::string_view ScopeName(Scope scope) {
  switch (scope) {
    case Scope::kHost:
      return "host";
    case Scope::kJob:
      return "job";
    case Scope::kGpu:
      return "gpu";
    case Scope::kTraining:
      return "training";
  }
  return "";
}

std::string_view UnitName(Unit unit) {
  switch (unit) {
    case Unit::kRatio:
      return "ratio";
    case Unit::kBytes:
      return "bytes";
    case Unit::kBytesPerSecond:
      return "bytes/s";
    case Unit::kCores:
      return "cores";
    case Unit::kCount:
      return "count";
    case Unit::kCelsius:
      return "celsius";
    case Unit::kWatts:
      return "watts";
    case Unit::kJoules:
      return "joules";
    case Unit::kHertz:
      return "hertz";
    case Unit::kSeconds:
      return "seconds";
    case Unit::kNone:
      return "1";
  }
  return "";
}

double RowValue(const MetricDef& m, const Stat& s) {
  return m.kind == Kind::kGauge ? s.mean : s.last;
}

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kGauge:
      return "gauge";
    case Kind::kCounter:
      return "counter";
    case Kind::kState:
      return "state";
  }
  return "";
}

bool IsIntegral(Unit unit) { return unit == Unit::kBytes || unit == Unit::kCount; }

double RoundAsWritten(double v, bool integral) {
  if (!std::isfinite(v)) return v;
  if (integral) return std::nearbyint(v);  // as "{:.0f}" prints it: half to even
  double r = std::round(v * 1e4) / 1e4;
  return r == 0 && v != 0 ? v : r;  // keep tiny values visible rather than 0
}

std::string_view JsonKey(const MetricDef& m) { return m.name; }

std::string PrometheusName(const MetricDef& m) {
  std::string name = fmt::format("trainvitals_{}_{}", ScopeName(m.scope), m.name);
  if (m.kind == Kind::kCounter && !name.ends_with("_total")) name += "_total";
  return name;
}

std::string TensorBoardTag(const MetricDef& m, int gpu_index) {
  std::string name(m.name);
  if (m.unit == Unit::kBytes) {
    size_t at = name.rfind("_bytes");
    if (at != std::string::npos) name.replace(at, 6, "_mib");
  }
  switch (m.scope) {
    case Scope::kHost:
      return fmt::format("system/{}", name);
    case Scope::kJob:
      return fmt::format("job/{}", name);
    case Scope::kGpu:
      return fmt::format("gpu{}/{}", gpu_index, name);
    case Scope::kTraining:
      return fmt::format("training/{}", name);
  }
  return name;
}

double TensorBoardValue(const MetricDef& m, double v) {
  return m.unit == Unit::kBytes ? v / (1024.0 * 1024.0) : v;
}

}  // namespace tv

namespace tv {

std::string MetricsMarkdown() {
  std::string out;
  auto table = [&out](std::span<const MetricDef> defs, std::string_view title,
                      std::string_view prefix) {
    out += fmt::format("## {}\n\n", title);
    out +=
        "| JSON key | unit | kind | Prometheus | TensorBoard | meaning "
        "|\n|---|---|---|---|---|---|\n";
    for (const MetricDef& m : defs) {
      std::string key = fmt::format(
          "{}{}", prefix.empty() ? std::string(ScopeName(m.scope)) + "." : std::string(prefix),
          m.name);
      std::string name = key;
      if (m.kind == Kind::kGauge && m.keep_max) key += fmt::format("`, `{}_max", name);
      if (m.kind == Kind::kGauge && m.keep_min) key += fmt::format("`, `{}_min", name);
      out += fmt::format("| `{}` | {} | {} | `{}` | `{}` | {} |\n", key, UnitName(m.unit),
                         KindName(m.kind), PrometheusName(m), TensorBoardTag(m, 0), m.help);
    }
    out += "\n";
  };
  table(SampleMetrics(), "Host and job", "");
  table(GpuMetrics(), "Per GPU (`gpus[]`)", "gpus[].");
  return out;
}

}  // namespace tv

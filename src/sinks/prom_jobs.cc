// The series of the node's jobs (`serve`; docs/cluster.md): identity in one
// info series a job, figures labelled by `job` alone (and `gpu`), so a job
// costs a bounded handful of series and the device series carry no job label.
#include <fmt/format.h>

#include <algorithm>

#include "sinks/prom_series.h"

namespace tv {
namespace {

struct JobWriter {
  const PromLabels& labels;
  PromFormat format;
  std::string* out;
  bool first = true;

  void Start(std::string_view name, const JobRow& job) {
    AppendSeriesStart(name, labels, format, out, &first);
    AppendLabel("job", job.identity->job, format, &first, out);
  }
  void Gpu(const GpuRow& gpu) {
    AppendLabel("gpu", fmt::format("{}", gpu.index), format, &first, out);
    if (gpu.mig_instance >= 0) {
      AppendLabel("mig", fmt::format("{}", gpu.mig_instance), format, &first, out);
    }
  }
  void End(double v) { AppendSampleEnd(v, first, out); }
};

constexpr MetricDef Gauge(std::string_view name, Unit unit, std::string_view help) {
  return MetricDef{Scope::kJob, name, unit, Kind::kGauge, false, help};
}

constexpr MetricDef kInfo =
    Gauge("info", Unit::kNone,
          "1 for each job on the node: who it is (kind, user, account, partition, namespace, pod, "
          "container, node). Join it on `job` (docs/cluster.md).");
constexpr MetricDef kRunning =
    Gauge("running", Unit::kNone, "1 while the job runs, 0 for a while after it ended.");
constexpr MetricDef kStart =
    Gauge("start_time_seconds", Unit::kSeconds, "When the agent first saw the job (unix time).");
constexpr MetricDef kGpusHeld =
    Gauge("gpus_held", Unit::kCount,
          "GPUs the job holds: those its processes use and those its environment names; 0 once "
          "it ended.");
constexpr MetricDef kHeldSeconds{
    Scope::kJob,
    "gpu_held_seconds",
    Unit::kSeconds,
    Kind::kCounter,
    false,
    "GPU-seconds the job has held since the agent first saw it (each GPU it uses or was given, "
    "each second): GPU-hours held are this over 3600."};
constexpr MetricDef kBusySeconds{
    Scope::kJob,
    "gpu_busy_seconds",
    Unit::kSeconds,
    Kind::kCounter,
    false,
    "GPU-seconds the job kept busy: each held GPU's busy share (SM activity where measured, else "
    "its utilisation; on a shared GPU the job's own SM share) over time."};
constexpr MetricDef kMemoryPeak = Gauge("memory_peak_bytes", Unit::kBytes,
                                        "The highest working set the job has had since the agent "
                                        "first saw it.");
constexpr MetricDef kAllocated =
    Gauge("gpu_allocated", Unit::kNone,
          "1 for a GPU the job's environment names (SLURM_JOB_GPUS, NVIDIA_VISIBLE_DEVICES, "
          "CUDA_VISIBLE_DEVICES), 0 for one it only uses.");

constexpr MetricDef kJobHealth{
    Scope::kTraining, "health_score", Unit::kNone,
    Kind::kGauge,     false,          "The job's health score so far, 0-100 (docs/findings.md)."};
constexpr MetricDef kJobFinding{
    Scope::kTraining,
    "finding_active",
    Unit::kNone,
    Kind::kGauge,
    false,
    "1 while a finding of this id is open for the job, 0 after it closed (docs/findings.md)."};

constexpr MetricDef kSession =
    Gauge("session_info", Unit::kNone,
          "1 for each training session in the job (trainvitals run or attach, a callback or "
          "monitor()): its run name and mode; `session` is its monitoring process.");

// The session's health where one judges the job (with its step and data-wait
// markers), the lowest of several; else the agent's own judgement.
std::optional<double> HealthOf(const JobRow& job) {
  std::optional<double> lowest;
  for (const JobSession& s : job.sessions) {
    if (s.health_score) lowest = std::min(lowest.value_or(*s.health_score), *s.health_score);
  }
  return lowest ? lowest : job.row.health_score;
}

}  // namespace

void AppendJobSeries(const Row& row, const PromLabels& labels, PromFormat format,
                     std::string* out) {
  JobWriter w{labels, format, out};
  // `name`: the family's, where it is not the one the table derives.
  auto family = [&](const MetricDef& def, auto&& each, std::string name = {}) {
    if (name.empty()) name = PrometheusName(def);
    bool header = false;
    for (const auto& job : row.jobs) {
      each(*job, [&]() -> JobWriter& {
        if (!header) AppendFamilyHeader(def, name, format, out);
        header = true;
        w.Start(name, *job);
        return w;
      });
    }
  };
  family(kInfo, [&](const JobRow& job, auto start) {
    const JobIdentity& id = *job.identity;
    JobWriter& s = start();
    for (auto [key, value] : {std::pair{"kind", &id.kind},
                              {"user", &id.user},
                              {"account", &id.account},
                              {"partition", &id.partition},
                              {"namespace", &id.namespace_name},
                              {"pod", &id.pod},
                              {"container", &id.container}}) {
      if (!value->empty()) AppendLabel(key, *value, format, &s.first, out);
    }
    if (!labels.host.empty()) AppendLabel("node", labels.host, format, &s.first, out);
    s.End(1);
  });
  family(kRunning, [](const JobRow& job, auto start) { start().End(job.ended_t ? 0 : 1); });
  family(kStart, [](const JobRow& job, auto start) { start().End(job.started_t); });
  family(kHeldSeconds, [](const JobRow& job, auto start) { start().End(job.gpu_held_seconds); });
  family(kBusySeconds, [](const JobRow& job, auto start) { start().End(job.gpu_busy_seconds); });
  family(kMemoryPeak, [](const JobRow& job, auto start) {
    if (job.memory_peak_bytes) start().End(*job.memory_peak_bytes);
  });
  // A job that ended holds no GPU: while its series linger, it has no share
  // of one and no GPU of its own.
  family(kGpusHeld, [](const JobRow& job, auto start) {
    start().End(job.ended_t ? 0.0 : static_cast<double>(job.row.gpus.size()));
  });
  std::span<const MetricDef> defs = SampleMetrics();
  for (size_t i = 0; i < defs.size(); ++i) {
    if (defs[i].scope != Scope::kJob) continue;
    family(defs[i], [&](const JobRow& job, auto start) {
      if (i >= job.row.values.size() || !job.row.values[i]) return;
      start().End(RowValue(defs[i], *job.row.values[i]));
    });
  }
  std::span<const MetricDef> gdefs = GpuMetrics();
  for (size_t i = 0; i < gdefs.size(); ++i) {
    if (!gdefs[i].name.starts_with("job_")) continue;
    family(gdefs[i], [&](const JobRow& job, auto start) {
      if (job.ended_t) return;
      for (const GpuRow& g : job.row.gpus) {
        if (i >= g.values.size() || !g.values[i]) continue;
        JobWriter& s = start();
        s.Gpu(g);
        s.End(RowValue(gdefs[i], *g.values[i]));
      }
    });
  }
  family(kSession, [&](const JobRow& job, auto start) {
    for (const JobSession& session : job.sessions) {
      JobWriter& s = start();
      AppendLabel("session", fmt::format("{}", session.pid), format, &s.first, out);
      AppendLabel("run", session.name, format, &s.first, out);
      AppendLabel("mode", session.mode, format, &s.first, out);
      s.End(1);
    }
  });
  // What each session says of its training, by the families a run serves.
  for (auto [id, value] : {std::pair{metric::kTrainingEpoch, &JobSession::epoch},
                           {metric::kTrainingStep, &JobSession::step},
                           {metric::kTrainingStepsPerSecond, &JobSession::steps_per_second},
                           {metric::kTrainingDataWaitRatio, &JobSession::data_wait_ratio}}) {
    family(Def(id), [&, value = value](const JobRow& job, auto start) {
      for (const JobSession& session : job.sessions) {
        if (!(session.*value)) continue;
        JobWriter& s = start();
        AppendLabel("session", fmt::format("{}", session.pid), format, &s.first, out);
        s.End(*(session.*value));
      }
    });
  }
  family(
      kJobHealth,
      [](const JobRow& job, auto start) {
        if (std::optional<double> health = HealthOf(job)) start().End(*health);
      },
      "trainvitals_health_score");
  family(
      kJobFinding,
      [&](const JobRow& job, auto start) {
        std::vector<std::string_view> said;
        auto finding = [&](std::string_view id, std::string_view severity, bool active) {
          if (std::find(said.begin(), said.end(), id) != said.end()) return;
          said.push_back(id);
          JobWriter& s = start();
          AppendLabel("finding", id, format, &s.first, out);
          AppendLabel("severity", severity, format, &s.first, out);
          s.End(active ? 1 : 0);
        };
        for (const Row::Finding& f : job.row.findings) finding(f.id, f.severity, f.active);
        // Those the sessions judge with their markers (input-bound, straggler, ...).
        for (const JobSession& session : job.sessions) {
          for (const auto& [id, severity] : session.findings) finding(id, severity, true);
        }
      },
      "trainvitals_finding_active");
  family(kAllocated, [](const JobRow& job, auto start) {
    if (job.ended_t) return;
    for (size_t g = 0; g < job.row.gpus.size(); ++g) {
      JobWriter& s = start();
      s.Gpu(job.row.gpus[g]);
      s.End(g < job.allocated.size() && job.allocated[g] ? 1 : 0);
    }
  });
  bool first = true;
  static constexpr std::string_view kJobs = "trainvitals_jobs";
  AppendGaugeHeader(kJobs, "Jobs the agent serves, by state (running, ended).", format, out);
  size_t running = static_cast<size_t>(
      std::count_if(row.jobs.begin(), row.jobs.end(), [](const auto& j) { return !j->ended_t; }));
  for (auto [state, n] : {std::pair{"running", running}, {"ended", row.jobs.size() - running}}) {
    AppendSeriesStart(kJobs, labels, format, out, &first);
    AppendLabel("state", state, format, &first, out);
    AppendSampleEnd(static_cast<double>(n), first, out);
  }
  static constexpr MetricDef kDropped{
      Scope::kJob,
      "jobs_dropped",
      Unit::kCount,
      Kind::kCounter,
      false,
      "Jobs not served because the agent followed its most jobs at once (--max-jobs)."};
  static constexpr std::string_view kDroppedName = "trainvitals_jobs_dropped_total";
  AppendFamilyHeader(kDropped, kDroppedName, format, out);
  AppendSeriesStart(kDroppedName, labels, format, out, &first);
  AppendSampleEnd(static_cast<double>(row.jobs_dropped), first, out);
}

}  // namespace tv

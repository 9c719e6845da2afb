#include "sinks/prom_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/escape.h"
#include "core/metrics.h"
#include "sinks/prom_series.h"

namespace tv {
namespace {

std::string_view ModelOf(const PromLabels& labels, const GpuRow& gpu) {
  for (const PromGpuLabel& g : labels.gpus) {
    if (g.index == gpu.index && g.mig_instance == gpu.mig_instance) return g.model;
  }
  return {};
}

// The top kGpuTopProcesses of `gpu` by memory (unknown memory last), in that order.
std::vector<const GpuProcess*> TopProcesses(const GpuRow& gpu) {
  std::vector<const GpuProcess*> top;
  top.reserve(gpu.processes.size());
  for (const GpuProcess& p : gpu.processes) top.push_back(&p);
  std::stable_sort(top.begin(), top.end(), [](const GpuProcess* a, const GpuProcess* b) {
    return a->memory_bytes.value_or(-1) > b->memory_bytes.value_or(-1);
  });
  if (top.size() > kGpuTopProcesses) top.resize(kGpuTopProcesses);
  return top;
}

// The run so far over the GPUs the job used, as summary.json's "cost" will
// say it (Row::run_*): one series each, so the count stays bounded.
void AppendRunCost(const Row& row, const PromLabels& labels, PromFormat format, std::string* out) {
  static constexpr MetricDef kGpusUsed{
      Scope::kTraining,
      "run_gpus_used",
      Unit::kCount,
      Kind::kGauge,
      false,
      "GPUs the job has used so far (its processes or memory seen on them; docs/cost.md)."};
  static constexpr MetricDef kBusy{
      Scope::kTraining,
      "run_gpu_busy_ratio",
      Unit::kRatio,
      Kind::kGauge,
      false,
      "The run's busy share so far of the GPUs the job used: the mean over them of each one's "
      "mean sm_active_ratio where every one measured it, else util_ratio (summary.json "
      "cost.busy_ratio)."};
  static constexpr MetricDef kEnergy{
      Scope::kTraining,
      "run_gpu_energy_joules",
      Unit::kJoules,
      Kind::kCounter,
      false,
      "Energy drawn by the GPUs the job used since monitoring began (summary.json "
      "cost.gpu_energy_kwh)."};
  static constexpr MetricDef kCost{
      Scope::kTraining,
      "run_cost",
      Unit::kNone,
      Kind::kCounter,
      false,
      "The run's cost so far in money at its [cost] rates: GPU-hours held and energy drawn "
      "(summary.json cost.money; docs/cost.md)."};
  bool first = true;
  auto plain = [&](const MetricDef& def, std::string_view name, std::optional<double> v) {
    if (!v) return;
    AppendFamilyHeader(def, name, format, out);
    AppendSeriesStart(name, labels, format, out, &first);
    AppendSampleEnd(*v, first, out);
  };
  plain(kGpusUsed, "trainvitals_run_gpus_used",
        row.run_gpus_used ? std::optional<double>(*row.run_gpus_used) : std::nullopt);
  plain(kBusy, "trainvitals_run_gpu_busy_ratio", row.run_gpu_busy_ratio);
  plain(kEnergy, "trainvitals_run_gpu_energy_joules_total", row.run_gpu_energy_joules);
  if (row.run_money) {
    static constexpr std::string_view kName = "trainvitals_run_cost_total";
    AppendFamilyHeader(kCost, kName, format, out);
    AppendSeriesStart(kName, labels, format, out, &first);
    AppendLabel("currency", row.run_currency, format, &first, out);
    AppendSampleEnd(*row.run_money, first, out);
  }
}

}  // namespace

void AppendLabel(std::string_view name, std::string_view value, PromFormat format, bool* first,
                 std::string* out) {
  out->push_back(*first ? '{' : ',');
  *first = false;
  out->append(name);
  out->append("=\"");
  AppendEscapedLabelValue(value, format, out);
  out->push_back('"');
}

// The name and labels every series carries.
void AppendSeriesStart(std::string_view name, const PromLabels& labels, PromFormat format,
                       std::string* out, bool* first) {
  out->append(name);
  *first = true;
  if (!labels.host.empty()) AppendLabel("host", labels.host, format, first, out);
  if (!labels.run.empty()) AppendLabel("run", labels.run, format, first, out);
  // The node's jobs label their own series (prom_jobs.cc): never twice.
  if (!labels.job.empty() && !labels.node) AppendLabel("job", labels.job, format, first, out);
}

void AppendSampleEnd(double v, bool first, std::string* out) {
  if (!first) out->push_back('}');
  out->push_back(' ');
  AppendPromValue(v, out);
  out->push_back('\n');
}

void AppendFamilyHeader(const MetricDef& m, std::string_view name, PromFormat format,
                        std::string* out) {
  // OpenMetrics names a counter family without its _total suffix.
  std::string_view family = name;
  if (format == PromFormat::kOpenMetrics && m.kind == Kind::kCounter) {
    family.remove_suffix(std::string_view("_total").size());
  }
  out->append("# HELP ");
  out->append(family);
  out->push_back(' ');
  AppendEscapedHelp(m.help, format, out);
  out->append("\n# TYPE ");
  out->append(family);
  out->append(m.kind == Kind::kCounter ? " counter\n" : " gauge\n");
}

void AppendGaugeHeader(std::string_view name, std::string_view help, PromFormat format,
                       std::string* out) {
  out->append("# HELP ");
  out->append(name);
  out->push_back(' ');
  AppendEscapedHelp(help, format, out);
  out->append("\n# TYPE ");
  out->append(name);
  out->append(" gauge\n");
}

void AppendValidUtf8(std::string_view text, std::string* out) {
  while (!text.empty()) {
    size_t n = ValidUtf8Length(text);
    if (n == 0) {
      out->append("\xEF\xBF\xBD");  // U+FFFD REPLACEMENT CHARACTER
      n = 1;
    } else {
      out->append(text.substr(0, n));
    }
    text.remove_prefix(n);
  }
}

void AppendEscapedLabelValue(std::string_view value, PromFormat format, std::string* out) {
  (void)format;  // both formats escape the same three characters in a label value
  auto escape = [out](std::string_view visible) {
    for (char c : visible) {
      if (c == '\\' || c == '"') out->push_back('\\');
      out->push_back(c);
    }
  };
  if (IsPrintableAscii(value)) {
    escape(value);
  } else {
    escape(VisibleText(value));  // no newline is left to escape
  }
}

void AppendEscapedHelp(std::string_view help, PromFormat format, std::string* out) {
  for (char c : help) {
    if (c == '\\')
      out->append("\\\\");
    else if (c == '\n')
      out->append("\\n");
    else if (c == '"' && format == PromFormat::kOpenMetrics)
      out->append("\\\"");
    else
      out->push_back(c);
  }
}

void AppendPromValue(double v, std::string* out) {
  if (std::isnan(v))
    out->append("NaN");
  else if (std::isinf(v))
    out->append(v > 0 ? "+Inf" : "-Inf");
  else
    fmt::format_to(std::back_inserter(*out), "{}", v);
}

std::string RenderPrometheus(const Row& row, const PromLabels& labels, PromFormat format) {
  std::string out;
  out.reserve(4096 + row.gpus.size() * 3072);
  bool first = true;
  std::span<const MetricDef> defs = SampleMetrics();
  for (size_t i = 0; i < defs.size() && i < row.values.size(); ++i) {
    if (!row.values[i]) continue;
    std::string name = PrometheusName(defs[i]);
    AppendFamilyHeader(defs[i], name, format, &out);
    AppendSeriesStart(name, labels, format, &out, &first);
    AppendSampleEnd(RowValue(defs[i], *row.values[i]), first, &out);
  }
  // Per training process with a step slot, labelled by its rank (-1: not distributed).
  static constexpr MetricDef kProcessSteps{
      Scope::kTraining, "process_steps", Unit::kCount,
      Kind::kCounter,   false,           "Steps taken by one training process (markers), by rank."};
  for (size_t r = 0; r < row.training.ranks.size(); ++r) {
    const RankSteps& rank = row.training.ranks[r];
    static const std::string name = PrometheusName(kProcessSteps);
    if (r == 0) AppendFamilyHeader(kProcessSteps, name, format, &out);
    AppendSeriesStart(name, labels, format, &out, &first);
    AppendLabel("rank", fmt::format("{}", rank.rank), format, &first, &out);
    AppendLabel("pid", fmt::format("{}", rank.pid), format, &first, &out);
    AppendSampleEnd(rank.steps, first, &out);
  }
  // Per training process that times its data wait, its share over the row's
  // interval, same labels: the straggler rules judge each rank by it
  // (deploy/prometheus/job_rules.yml). One that does not time it has none.
  static constexpr MetricDef kProcessDataWait{
      Scope::kTraining,
      "process_data_wait_ratio",
      Unit::kRatio,
      Kind::kGauge,
      false,
      "The share of the last interval one training process waited for its next batch (markers), by "
      "rank."};
  bool data_wait_header = false;
  for (const RankSteps& rank : row.training.ranks) {
    if (!rank.data_wait_ratio) continue;
    static const std::string name = PrometheusName(kProcessDataWait);
    if (!data_wait_header) AppendFamilyHeader(kProcessDataWait, name, format, &out);
    data_wait_header = true;
    AppendSeriesStart(name, labels, format, &out, &first);
    AppendLabel("rank", fmt::format("{}", rank.rank), format, &first, &out);
    AppendLabel("pid", fmt::format("{}", rank.pid), format, &first, &out);
    AppendSampleEnd(*rank.data_wait_ratio, first, &out);
  }
  // The analysis: the health score and the findings opened so far.
  static constexpr MetricDef kHealth{
      Scope::kTraining, "health_score", Unit::kNone,
      Kind::kGauge,     false,          "The run's health score so far, 0-100 (docs/findings.md)."};
  if (row.health_score) {
    static const std::string name = "trainvitals_health_score";
    AppendFamilyHeader(kHealth, name, format, &out);
    AppendSeriesStart(name, labels, format, &out, &first);
    AppendSampleEnd(*row.health_score, first, &out);
  }
  // Where the time went so far (docs/findings.md "Where the time went").
  static constexpr MetricDef kGoodput{
      Scope::kTraining,
      "goodput_ratio",
      Unit::kRatio,
      Kind::kGauge,
      false,
      "The share of the run's time in productive training steps so far (step markers)."};
  if (row.goodput_ratio) {
    static const std::string name = "trainvitals_goodput_ratio";
    AppendFamilyHeader(kGoodput, name, format, &out);
    AppendSeriesStart(name, labels, format, &out, &first);
    AppendSampleEnd(*row.goodput_ratio, first, &out);
  }
  AppendRunCost(row, labels, format, &out);
  static constexpr MetricDef kTimeSpent{
      Scope::kTraining,
      "time_spent_seconds",
      Unit::kSeconds,
      Kind::kCounter,
      false,
      "The run's time so far by where it went (spent: productive, startup, data_wait, "
      "evaluation, checkpoint, other_phases, stalled, idle_gpu, unattributed)."};
  for (size_t i = 0; i < row.time_spent_s.size(); ++i) {
    static const std::string name = PrometheusName(kTimeSpent);
    if (i == 0) AppendFamilyHeader(kTimeSpent, name, format, &out);
    AppendSeriesStart(name, labels, format, &out, &first);
    AppendLabel("spent", row.time_spent_s[i].first, format, &first, &out);
    AppendSampleEnd(row.time_spent_s[i].second, first, &out);
  }
  static constexpr MetricDef kFindingActive{
      Scope::kTraining,
      "finding_active",
      Unit::kNone,
      Kind::kGauge,
      false,
      "1 while a finding of this id is open, 0 after it closed (docs/findings.md)."};
  for (size_t i = 0; i < row.findings.size(); ++i) {
    static const std::string name = "trainvitals_finding_active";
    if (i == 0) AppendFamilyHeader(kFindingActive, name, format, &out);
    AppendSeriesStart(name, labels, format, &out, &first);
    AppendLabel("finding", row.findings[i].id, format, &first, &out);
    AppendLabel("severity", row.findings[i].severity, format, &first, &out);
    AppendSampleEnd(row.findings[i].active ? 1 : 0, first, &out);
  }
  static constexpr MetricDef kAlertFiring{
      Scope::kTraining,
      "alert_firing",
      Unit::kNone,
      Kind::kGauge,
      false,
      "1 while an alert fires (gpu: its GPU, for a per-GPU rule), 0 after it resolved "
      "(docs/alerts.md)."};
  for (size_t i = 0; i < row.alerts.size(); ++i) {
    static const std::string name = "trainvitals_alert_firing";
    const Row::Alert& a = row.alerts[i];
    if (i == 0) AppendFamilyHeader(kAlertFiring, name, format, &out);
    AppendSeriesStart(name, labels, format, &out, &first);
    AppendLabel("alert", a.name, format, &first, &out);
    AppendLabel("severity", a.severity, format, &first, &out);
    if (a.gpu >= 0) AppendLabel("gpu", fmt::format("{}", a.gpu), format, &first, &out);
    AppendSampleEnd(a.firing ? 1 : 0, first, &out);
  }
  std::span<const MetricDef> gdefs = GpuMetrics();
  std::vector<std::string> gpu_names(row.gpus.size()), gpu_models(row.gpus.size());
  auto append_gpu_labels = [&](size_t g) {
    const GpuRow& gpu = row.gpus[g];
    if (gpu_names[g].empty()) {
      gpu_names[g] = fmt::format("{}", gpu.index);
      gpu_models[g] = std::string(ModelOf(labels, gpu));
    }
    AppendLabel("gpu", gpu_names[g], format, &first, &out);
    if (!gpu_models[g].empty()) AppendLabel("gpu_model", gpu_models[g], format, &first, &out);
    if (gpu.mig_instance >= 0)
      AppendLabel("mig", fmt::format("{}", gpu.mig_instance), format, &first, &out);
  };
  for (size_t i = 0; i < gdefs.size(); ++i) {
    bool header = false;
    std::string name;
    for (size_t g = 0; g < row.gpus.size(); ++g) {
      const GpuRow& gpu = row.gpus[g];
      if (i >= gpu.values.size() || !gpu.values[i]) continue;
      if (!header) {
        name = PrometheusName(gdefs[i]);
        AppendFamilyHeader(gdefs[i], name, format, &out);
        header = true;
      }
      AppendSeriesStart(name, labels, format, &out, &first);
      append_gpu_labels(g);
      AppendSampleEnd(RowValue(gdefs[i], *gpu.values[i]), first, &out);
    }
  }
  if (labels.node) {
    AppendJobSeries(row, labels, format, &out);
    if (format == PromFormat::kOpenMetrics) out.append("# EOF\n");
    return out;
  }
  // Per process: the top kGpuTopProcesses by memory of each GPU, as the
  // interval's last sample listed them.
  std::vector<std::vector<const GpuProcess*>> top(row.gpus.size());
  for (size_t g = 0; g < row.gpus.size(); ++g) top[g] = TopProcesses(row.gpus[g]);
  struct ProcessFamily {
    std::string_view name, help;
    std::optional<double> GpuProcess::*value;
  };
  static_assert(kGpuTopProcesses == 8, "the HELP texts below say 8");
  static constexpr ProcessFamily kProcessFamilies[] = {
      {"trainvitals_gpu_process_memory_bytes",
       "Device memory used by one compute process (the GPU's top 8 by memory), at the "
       "interval's last sample.",
       &GpuProcess::memory_bytes},
      {"trainvitals_gpu_process_sm_util_ratio",
       "Fraction of time one compute process ran kernels on the GPU (the GPU's top 8 by "
       "memory), over the driver's latest per-process window.",
       &GpuProcess::sm_util_ratio},
  };
  for (const ProcessFamily& f : kProcessFamilies) {
    bool header = false;
    for (size_t g = 0; g < row.gpus.size(); ++g) {
      for (const GpuProcess* p : top[g]) {
        const std::optional<double>& v = p->*f.value;
        if (!v) continue;
        if (!header) {
          AppendGaugeHeader(f.name, f.help, format, &out);
          header = true;
        }
        AppendSeriesStart(f.name, labels, format, &out, &first);
        append_gpu_labels(g);
        AppendLabel("pid", fmt::format("{}", p->pid), format, &first, &out);
        if (!p->name.empty() && (p->is_job || labels.outside_process_names)) {
          AppendLabel("name", p->name, format, &first, &out);
        }
        AppendLabel("owner", p->is_job ? "job" : "other", format, &first, &out);
        AppendSampleEnd(*v, first, &out);
      }
    }
  }
  if (format == PromFormat::kOpenMetrics) out.append("# EOF\n");
  return out;
}

bool WantsOpenMetrics(std::string_view accept) {
  return accept.find("application/openmetrics-text") != std::string_view::npos;
}

}  // namespace tv

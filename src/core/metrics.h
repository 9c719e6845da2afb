// The metric table: every number trainvitals records, with its unit, kind and
// help, defined once. JSON keys in samples.jsonl, Prometheus names and
// TensorBoard tags are all derived from these entries (see the functions below),
// so a metric is named in exactly one place.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/row.h"
#include "core/sample.h"

namespace tv {

enum class Unit {
  kRatio,
  kBytes,
  kBytesPerSecond,
  kCores,
  kCount,
  kCelsius,
  kWatts,
  kJoules,
  kHertz,
  kSeconds,
  kNone
};
// kState: a level reported as its latest value, not averaged (step, epoch);
// a gauge for Prometheus.
enum class Kind { kGauge, kCounter, kState };
enum class Scope { kHost, kJob, kGpu, kTraining };

struct MetricDef {
  Scope scope;
  std::string_view name;  // unit in the name: "memory_used_bytes"
  Unit unit;
  Kind kind;
  bool keep_max;  // rows carry "<name>_max" beside the interval mean
  std::string_view help;
  std::optional<double> (*get)(const Sample&) = nullptr;         // host and job scopes
  std::optional<double> (*get_gpu)(const GpuSample&) = nullptr;  // gpu scope
  // Optional: a value the row max must also see (the driver's buffered peak
  // since the previous tick), though it does not enter the mean.
  std::optional<double> (*get_gpu_peak)(const GpuSample&) = nullptr;
  // Rows also carry "<name>_min", the lowest sample: the memory figures whose
  // floors the leak rules read (a short trough between rows is not averaged away).
  bool keep_min = false;
};

// Host and job metrics, in the order they are written.
std::span<const MetricDef> SampleMetrics();
// Per-GPU metrics, in the order they are written.
std::span<const MetricDef> GpuMetrics();

std::string_view ScopeName(Scope scope);  // "host", "job", "gpu", "training"
std::string_view UnitName(Unit unit);     // "bytes", "ratio", ...
// Key inside the scope's JSON object: the name itself.
std::string_view JsonKey(const MetricDef& m);
// Prometheus family name: trainvitals_<scope>_<name>, counters end in _total.
std::string PrometheusName(const MetricDef& m);
// TensorBoard tag: system/<name>, job/<name>, gpu<N>/<name>, training/<name>. TensorBoard
// scalars are float32, so byte amounts are shown in MiB: for Unit::kBytes the
// name's "_bytes" becomes "_mib" (job/memory_bytes -> job/memory_mib).
std::string TensorBoardTag(const MetricDef& m, int gpu_index = 0);
// The value written under TensorBoardTag: bytes / 2^20 for Unit::kBytes, else `v`.
double TensorBoardValue(const MetricDef& m, double v);
// The value a row shows for `s`: the last value of counters and states, else the mean.
double RowValue(const MetricDef& m, const Stat& s);
// A handle to one entry of the metric table. Views and analysis read metrics
// through handles (metric::kJobCpuCores), never by a name string: a handle is
// resolved when the table is compiled, so renaming or removing a metric that
// something reads fails to compile instead of vanishing from a view.
struct MetricId {
  bool gpu = false;  // an index into GpuMetrics(), else into SampleMetrics()
  size_t index = 0;
};
const MetricDef& Def(MetricId id);
// Resolves a handle when the table files compile: a name that is not in
// `table` is not a constant expression, so the build fails there.
consteval MetricId ResolveMetric(std::span<const MetricDef> table, bool gpu, Scope scope,
                                 std::string_view name) {
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i].scope == scope && table[i].name == name) return MetricId{gpu, i};
  }
  throw "metric not in the table";
}
// The Stat of `id` in a row's `values` (parallel to its table); nullopt when
// the metric is absent from the row.
std::optional<Stat> FindStat(MetricId id, const std::vector<std::optional<Stat>>& values);

namespace metric {
extern const MetricId kHostMemoryUsedBytes;
extern const MetricId kHostCpuUtilRatio;
extern const MetricId kHostCpuLimitCores;
extern const MetricId kJobRssBytes;
extern const MetricId kHostMemoryLimitBytes;
extern const MetricId kHostMemoryAvailableBytes;
extern const MetricId kHostCgroupMemoryCurrentBytes;
extern const MetricId kJobCpuCores;
extern const MetricId kJobMemoryBytes;
extern const MetricId kJobMemoryAnonPssBytes;
extern const MetricId kJobProcesses;
extern const MetricId kTrainingEpoch;
extern const MetricId kTrainingStep;
extern const MetricId kTrainingSteps;
extern const MetricId kTrainingStepsPerSecond;
extern const MetricId kTrainingDataWaitRatio;
extern const MetricId kHostSwapUsedBytes;
extern const MetricId kHostCpuEnergyJoules;
extern const MetricId kHostCpuIowaitRatio;
extern const MetricId kJobCpuUtilRatio;
extern const MetricId kJobMemoryUtilRatio;
extern const MetricId kJobCpuPressureRatio;
extern const MetricId kJobIoPressureRatio;
extern const MetricId kGpuUtilRatio;
extern const MetricId kGpuMemoryUsedBytes;
extern const MetricId kGpuMemoryTotalBytes;
extern const MetricId kGpuJobMemoryBytes;
extern const MetricId kGpuJobSmUtilRatio;
extern const MetricId kGpuOtherMemoryBytes;
extern const MetricId kGpuAllocatorPeakBytes;
extern const MetricId kGpuTemperatureCelsius;
extern const MetricId kGpuPowerWatts;
extern const MetricId kGpuEnergyJoules;
extern const MetricId kGpuSmActiveRatio;
extern const MetricId kGpuAllocatorAllocatedBytes;
extern const MetricId kGpuAllocatorReservedBytes;
extern const MetricId kGpuJobProcesses;
extern const MetricId kGpuOtherProcesses;
extern const MetricId kGpuThrottleAnyRatio;
extern const MetricId kGpuThrottlePowerRatio;
extern const MetricId kGpuThrottleThermalRatio;
extern const MetricId kGpuThrottleHwSlowdownRatio;
}  // namespace metric
// Whether values of this unit are whole numbers in JSON.
bool IsIntegral(Unit unit);
// `v` as samples.jsonl writes it: whole numbers for integral units, else
// rounded to 4 decimals (a tiny non-zero value is kept as it is).
double RoundAsWritten(double v, bool integral);
// The row value of `s` exactly as samples.jsonl holds it, so that analysis of
// a live row and of its line read back agree to the bit.
inline double WrittenValue(const MetricDef& m, const Stat& s) {
  return RoundAsWritten(RowValue(m, s), IsIntegral(m.unit));
}
// "gauge", "counter" or "state".
std::string_view KindName(Kind kind);

}  // namespace tv

namespace tv {
// Markdown tables of every metric (JSON key, Prometheus name, TensorBoard tag,
// unit, kind, meaning), for docs/metrics.md.
std::string MetricsMarkdown();
}  // namespace tv

#include "analysis/findings/frame.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/metrics.h"
#include "core/run_file.h"

namespace tv {
namespace {

std::optional<double> Value(MetricId id, const std::vector<std::optional<Stat>>& values) {
  std::optional<Stat> s = FindStat(id, values);
  if (!s) return std::nullopt;
  return WrittenValue(Def(id), *s);
}

// The row's max (`lowest`: its min) of a metric whose rows keep one, else
// its row value.
std::optional<double> Extreme(MetricId id, const std::vector<std::optional<Stat>>& values,
                              bool lowest) {
  std::optional<Stat> s = FindStat(id, values);
  if (!s) return std::nullopt;
  const MetricDef& m = Def(id);
  if (!(lowest ? m.keep_min : m.keep_max)) return WrittenValue(m, *s);
  return RoundAsWritten(lowest ? s->min : s->max, IsIntegral(m.unit));
}

std::optional<double> Max(MetricId id, const std::vector<std::optional<Stat>>& values) {
  return Extreme(id, values, false);
}

std::optional<double> Min(MetricId id, const std::vector<std::optional<Stat>>& values) {
  return Extreme(id, values, true);
}

// `v` as samples.jsonl writes it ("{:.3f}") and reads back: rounding the
// decimal digits of the exact double, which `round(v * 1000) / 1000` does not
// always match (528.4805 may be ...480.49999 in binary but 528480.5 once multiplied).
double Millis(double v) {
  char text[64];
  auto end = fmt::format_to_n(text, sizeof(text) - 1, "{:.3f}", v).out;
  *end = '\0';
  return std::strtod(text, nullptr);
}

}  // namespace

void FrameFromRow(const Row& row, Frame* f) {
  f->t = Millis(row.t);  // as samples.jsonl writes them
  f->elapsed_s = Millis(row.elapsed_s);
  const auto& v = row.values;
  f->job_cpu_util_ratio = Value(metric::kJobCpuUtilRatio, v);
  f->job_memory_util_ratio = Value(metric::kJobMemoryUtilRatio, v);
  f->job_processes = Value(metric::kJobProcesses, v);
  f->job_memory_bytes = Value(metric::kJobMemoryBytes, v);
  f->job_memory_min_bytes = Min(metric::kJobMemoryBytes, v);
  f->host_memory_available_bytes = Value(metric::kHostMemoryAvailableBytes, v);
  f->host_memory_limit_bytes = Value(metric::kHostMemoryLimitBytes, v);
  f->host_cgroup_memory_current_bytes = Value(metric::kHostCgroupMemoryCurrentBytes, v);
  f->host_swap_used_bytes = Value(metric::kHostSwapUsedBytes, v);
  f->host_cpu_iowait_ratio = Value(metric::kHostCpuIowaitRatio, v);
  f->job_cpu_pressure_ratio = Value(metric::kJobCpuPressureRatio, v);
  f->job_io_pressure_ratio = Value(metric::kJobIoPressureRatio, v);
  f->steps = Value(metric::kTrainingSteps, v);
  f->data_wait_ratio = Value(metric::kTrainingDataWaitRatio, v);
  f->phase = row.training.phase;
  f->gpus.resize(row.gpus.size());
  for (size_t i = 0; i < row.gpus.size(); ++i) {
    const GpuRow& r = row.gpus[i];
    GpuFrame& g = f->gpus[i];
    g.index = r.index;
    g.busy = Value(metric::kGpuSmActiveRatio, r.values);
    if (!g.busy) g.busy = Value(metric::kGpuUtilRatio, r.values);
    g.memory_used_max_bytes = Max(metric::kGpuMemoryUsedBytes, r.values);
    g.allocator_allocated_max_bytes = Max(metric::kGpuAllocatorAllocatedBytes, r.values);
    g.allocator_allocated_bytes = Value(metric::kGpuAllocatorAllocatedBytes, r.values);
    g.allocator_reserved_bytes = Value(metric::kGpuAllocatorReservedBytes, r.values);
    g.allocator_allocated_min_bytes = Min(metric::kGpuAllocatorAllocatedBytes, r.values);
    g.allocator_reserved_min_bytes = Min(metric::kGpuAllocatorReservedBytes, r.values);
    g.job_memory_min_bytes = Min(metric::kGpuJobMemoryBytes, r.values);
    g.memory_used_bytes = Value(metric::kGpuMemoryUsedBytes, r.values);
    g.memory_total_bytes = Value(metric::kGpuMemoryTotalBytes, r.values);
    g.job_memory_bytes = Value(metric::kGpuJobMemoryBytes, r.values);
    g.job_processes = Value(metric::kGpuJobProcesses, r.values);
    g.other_memory_bytes = Value(metric::kGpuOtherMemoryBytes, r.values);
    g.other_processes = Value(metric::kGpuOtherProcesses, r.values);
    g.throttle_any_ratio = Value(metric::kGpuThrottleAnyRatio, r.values);
  }
  f->ranks.clear();
  if (row.training.ranks.size() > 1) {  // as samples.jsonl writes them
    for (const RankSteps& r : row.training.ranks) {
      std::optional<double> wait;
      if (r.data_wait_ratio) wait = RoundAsWritten(*r.data_wait_ratio, false);
      std::optional<double> memory;
      if (r.memory_bytes) memory = RoundAsWritten(*r.memory_bytes, true);
      f->ranks.push_back(RankFrame{r.rank, r.pid, RoundAsWritten(r.steps, true), wait, memory});
    }
  }
}

namespace {

namespace od = simdjson::ondemand;

// Where a key of a JSON object goes: `key` (from the metric table) into `out`.
struct Slot {
  std::string_view key;
  std::optional<double>* out;
};

// Reads the numbers of `object` whose keys have a slot; false on bad JSON.
bool ReadNumbers(od::object object, std::initializer_list<Slot> slots) {
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    for (const Slot& slot : slots) {
      if (slot.key != key) continue;
      double v = 0;
      if (!field.value().get_double().get(v)) *slot.out = v;
      break;
    }
  }
  return true;
}

std::string_view Key(MetricId id) { return JsonKey(Def(id)); }

// The `_max` key of a metric that keeps one, else its own key.
std::string MaxKey(MetricId id) {
  std::string key(JsonKey(Def(id)));
  if (Def(id).keep_max) key += "_max";
  return key;
}

// The `_min` key of a metric that keeps one.
std::string MinKey(MetricId id) { return std::string(JsonKey(Def(id))) + "_min"; }

// A file's number as an int: nullopt unless it is a whole number that fits.
std::optional<int> WholeInt(std::optional<double> v) {
  if (!v || !(*v >= std::numeric_limits<int>::min() && *v <= std::numeric_limits<int>::max()) ||
      *v != std::floor(*v)) {
    return std::nullopt;
  }
  return static_cast<int>(*v);
}

bool ReadGpu(od::object object, GpuFrame* g) {
  static const std::string kMemoryMax = MaxKey(metric::kGpuMemoryUsedBytes);
  static const std::string kAllocatorMax = MaxKey(metric::kGpuAllocatorAllocatedBytes);
  static const std::string kAllocatedMin = MinKey(metric::kGpuAllocatorAllocatedBytes);
  static const std::string kReservedMin = MinKey(metric::kGpuAllocatorReservedBytes);
  static const std::string kJobMemoryMin = MinKey(metric::kGpuJobMemoryBytes);
  std::optional<double> index, sm_active, util;
  *g = GpuFrame{};
  if (!ReadNumbers(object,
                   {{"index", &index},
                    {Key(metric::kGpuSmActiveRatio), &sm_active},
                    {Key(metric::kGpuUtilRatio), &util},
                    {kMemoryMax, &g->memory_used_max_bytes},
                    {kAllocatorMax, &g->allocator_allocated_max_bytes},
                    {Key(metric::kGpuAllocatorAllocatedBytes), &g->allocator_allocated_bytes},
                    {Key(metric::kGpuAllocatorReservedBytes), &g->allocator_reserved_bytes},
                    {kAllocatedMin, &g->allocator_allocated_min_bytes},
                    {kReservedMin, &g->allocator_reserved_min_bytes},
                    {kJobMemoryMin, &g->job_memory_min_bytes},
                    {Key(metric::kGpuMemoryUsedBytes), &g->memory_used_bytes},
                    {Key(metric::kGpuMemoryTotalBytes), &g->memory_total_bytes},
                    {Key(metric::kGpuJobMemoryBytes), &g->job_memory_bytes},
                    {Key(metric::kGpuJobProcesses), &g->job_processes},
                    {Key(metric::kGpuOtherMemoryBytes), &g->other_memory_bytes},
                    {Key(metric::kGpuOtherProcesses), &g->other_processes},
                    {Key(metric::kGpuThrottleAnyRatio), &g->throttle_any_ratio}})) {
    return false;
  }
  g->index = WholeInt(index).value_or(-1);
  g->busy = sm_active ? sm_active : util;
  return true;
}

bool ReadTraining(od::object object, Frame* f) {
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    if (key == "phase") {
      std::string_view phase;
      if (!field.value().get_string().get(phase)) f->phase = phase;
    } else if (key == "ranks") {
      od::array ranks;
      if (field.value().get_array().get(ranks)) return false;
      for (auto item : ranks) {
        od::object rank;
        if (item.get_object().get(rank)) return false;
        std::optional<double> number, pid, steps, wait, memory;
        if (!ReadNumbers(rank, {{"rank", &number},
                                {"pid", &pid},
                                {"steps", &steps},
                                {Key(metric::kTrainingDataWaitRatio), &wait},
                                {"memory_bytes", &memory}})) {
          return false;
        }
        std::optional<int> rank_number = WholeInt(number), rank_pid = WholeInt(pid);
        if (rank_number && rank_pid && steps) {
          f->ranks.push_back(RankFrame{*rank_number, *rank_pid, *steps, wait, memory});
        }
      }
    } else {
      std::optional<double>* out = key == Key(metric::kTrainingSteps) ? &f->steps
                                   : key == Key(metric::kTrainingDataWaitRatio)
                                       ? &f->data_wait_ratio
                                       : nullptr;
      double v = 0;
      if (out != nullptr && !field.value().get_double().get(v)) *out = v;
    }
  }
  return true;
}

}  // namespace

struct FrameReader::Impl {
  od::parser parser{kMaxJsonlLineBytes};  // a longer line is refused, never allocated for
  simdjson::padded_string line;
};

FrameReader::FrameReader() : impl_(std::make_unique<Impl>()) {}
FrameReader::~FrameReader() = default;

FrameReader::Line FrameReader::Read(std::string_view text, Frame* f) {
  static const std::string kJobMemoryMin = MinKey(metric::kJobMemoryBytes);
  impl_->line = simdjson::padded_string(text);
  od::document doc;
  od::object top;
  if (impl_->parser.iterate(impl_->line).get(doc) || doc.get_object().get(top)) {
    return Line::kNotJson;
  }
  *f = Frame{};
  std::optional<double> t, elapsed;
  for (auto field : top) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return Line::kNotJson;
    od::value value;
    if (field.value().get(value)) return Line::kNotJson;
    bool ok = true;
    if (key == "t" || key == "elapsed_s") {
      double v = 0;
      if (value.get_double().get(v)) return Line::kNotJson;
      (key == "t" ? t : elapsed) = v;
    } else if (key == "host" || key == "job" || key == "training") {
      od::object object;
      if (value.get_object().get(object)) return Line::kNotJson;
      if (key == "host") {
        ok = ReadNumbers(
            object,
            {{Key(metric::kHostSwapUsedBytes), &f->host_swap_used_bytes},
             {Key(metric::kHostMemoryAvailableBytes), &f->host_memory_available_bytes},
             {Key(metric::kHostMemoryLimitBytes), &f->host_memory_limit_bytes},
             {Key(metric::kHostCgroupMemoryCurrentBytes), &f->host_cgroup_memory_current_bytes},
             {Key(metric::kHostCpuIowaitRatio), &f->host_cpu_iowait_ratio}});
      } else if (key == "job") {
        ok = ReadNumbers(object, {{Key(metric::kJobCpuUtilRatio), &f->job_cpu_util_ratio},
                                  {Key(metric::kJobMemoryUtilRatio), &f->job_memory_util_ratio},
                                  {Key(metric::kJobProcesses), &f->job_processes},
                                  {Key(metric::kJobMemoryBytes), &f->job_memory_bytes},
                                  {kJobMemoryMin, &f->job_memory_min_bytes},
                                  {Key(metric::kJobCpuPressureRatio), &f->job_cpu_pressure_ratio},
                                  {Key(metric::kJobIoPressureRatio), &f->job_io_pressure_ratio}});
      } else {
        ok = ReadTraining(object, f);
      }
    } else if (key == "gpus") {
      od::array gpus;
      if (value.get_array().get(gpus)) return Line::kNotJson;
      for (auto item : gpus) {
        od::object object;
        if (item.get_object().get(object)) return Line::kNotJson;
        GpuFrame g;
        if (!ReadGpu(object, &g)) return Line::kNotJson;
        if (g.index < 0) g.index = static_cast<int>(f->gpus.size());
        f->gpus.push_back(g);
      }
    }
    if (!ok) return Line::kNotJson;
  }
  if (!t) return Line::kNotRow;
  f->t = *t;
  f->elapsed_s = elapsed.value_or(0);
  return Line::kRow;
}

}  // namespace tv

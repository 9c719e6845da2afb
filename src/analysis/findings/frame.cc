#include "analysis/findings/frame.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <array>
#include <cmath>
#include <cstdint>
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
  f->job_cpu_cores = Value(metric::kJobCpuCores, v);
  f->job_cpu_util_ratio = Value(metric::kJobCpuUtilRatio, v);
  f->job_memory_util_ratio = Value(metric::kJobMemoryUtilRatio, v);
  f->job_processes = Value(metric::kJobProcesses, v);
  f->job_memory_bytes = Value(metric::kJobMemoryBytes, v);
  f->job_memory_min_bytes = Min(metric::kJobMemoryBytes, v);
  f->job_memory_anon_pss_bytes = Value(metric::kJobMemoryAnonPssBytes, v);
  f->job_memory_anon_pss_min_bytes = Min(metric::kJobMemoryAnonPssBytes, v);
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
      std::optional<double> memory, anon;
      if (r.memory_bytes) memory = RoundAsWritten(*r.memory_bytes, true);
      if (r.memory_anon_pss_bytes) anon = RoundAsWritten(*r.memory_anon_pss_bytes, true);
      f->ranks.push_back(
          RankFrame{r.rank, r.pid, RoundAsWritten(r.steps, true), wait, memory, anon});
    }
  }
}

namespace {

namespace od = simdjson::ondemand;

// The keys of a JSON object that a reader takes, each to its place in a list
// of outputs: found by an open-addressed table on a few of the key's bytes,
// not by comparing each key with every one taken (a GPU's object has ~40 keys
// and 17 are taken, on every row).
class KeyIndex {
 public:
  KeyIndex(std::initializer_list<std::string_view> keys) {
    slots_.fill(-1);
    for (std::string_view key : keys) {
      size_t h = Hash(key);
      while (slots_[h] >= 0) h = (h + 1) % kSize;
      slots_[h] = static_cast<int16_t>(keys_.size());
      keys_.emplace_back(key);
    }
  }
  // The place of `key` in the list given; -1 when it is not taken.
  int Find(std::string_view key) const {
    for (size_t h = Hash(key);; h = (h + 1) % kSize) {
      int i = slots_[h];
      if (i < 0) return -1;
      if (keys_[static_cast<size_t>(i)] == key) return i;
    }
  }

 private:
  static constexpr size_t kSize = 64;  // at least twice the keys of any reader
  static size_t Hash(std::string_view k) {
    if (k.empty()) return 0;
    auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(k[i])); };
    return (k.size() * 131 + byte(0) * 31 + byte(k.size() / 2) * 7 + byte(k.size() - 1)) % kSize;
  }
  std::array<int16_t, kSize> slots_{};
  std::vector<std::string> keys_;
};

// The key of `field` as written, without unescaping it (the keys read need no
// escapes; one written with them reads as "\\", no key read). The closing
// quote is there: the parser refused an unclosed string when it indexed the line.
template <typename Field>
bool RawKey(Field& field, std::string_view* key) {
  od::raw_json_string raw;
  if (field.key().get(raw)) return false;
  const char* begin = raw.raw();
  const char* end = begin;
  while (*end != '"') ++end;
  *key = end > begin && end[-1] == '\\' ? std::string_view("\\")
                                        : std::string_view(begin, static_cast<size_t>(end - begin));
  return true;
}

// Reads the numbers of `object` whose keys `index` takes into `outs` (in the
// index's order); false on bad JSON.
bool ReadNumbers(od::object object, const KeyIndex& index,
                 std::initializer_list<std::optional<double>*> outs) {
  std::optional<double>* const* out = outs.begin();
  for (auto field : object) {
    std::string_view key;
    if (!RawKey(field, &key)) return false;
    int i = index.Find(key);
    if (i < 0) continue;
    double v = 0;
    if (!field.value().get_double().get(v)) *out[i] = v;
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
  static const KeyIndex kKeys = {"index",
                                 Key(metric::kGpuSmActiveRatio),
                                 Key(metric::kGpuUtilRatio),
                                 MaxKey(metric::kGpuMemoryUsedBytes),
                                 MaxKey(metric::kGpuAllocatorAllocatedBytes),
                                 Key(metric::kGpuAllocatorAllocatedBytes),
                                 Key(metric::kGpuAllocatorReservedBytes),
                                 MinKey(metric::kGpuAllocatorAllocatedBytes),
                                 MinKey(metric::kGpuAllocatorReservedBytes),
                                 MinKey(metric::kGpuJobMemoryBytes),
                                 Key(metric::kGpuMemoryUsedBytes),
                                 Key(metric::kGpuMemoryTotalBytes),
                                 Key(metric::kGpuJobMemoryBytes),
                                 Key(metric::kGpuJobProcesses),
                                 Key(metric::kGpuOtherMemoryBytes),
                                 Key(metric::kGpuOtherProcesses),
                                 Key(metric::kGpuThrottleAnyRatio)};
  std::optional<double> index, sm_active, util;
  *g = GpuFrame{};
  if (!ReadNumbers(
          object, kKeys,
          {&index, &sm_active, &util, &g->memory_used_max_bytes, &g->allocator_allocated_max_bytes,
           &g->allocator_allocated_bytes, &g->allocator_reserved_bytes,
           &g->allocator_allocated_min_bytes, &g->allocator_reserved_min_bytes,
           &g->job_memory_min_bytes, &g->memory_used_bytes, &g->memory_total_bytes,
           &g->job_memory_bytes, &g->job_processes, &g->other_memory_bytes, &g->other_processes,
           &g->throttle_any_ratio})) {
    return false;
  }
  g->index = WholeInt(index).value_or(-1);
  g->busy = sm_active ? sm_active : util;
  return true;
}

bool ReadTraining(od::object object, Frame* f) {
  for (auto field : object) {
    std::string_view key;
    if (!RawKey(field, &key)) return false;
    if (key == "phase") {
      std::string_view phase;
      if (!field.value().get_string().get(phase)) f->phase = phase;
    } else if (key == "ranks") {
      od::array ranks;
      if (field.value().get_array().get(ranks)) return false;
      for (auto item : ranks) {
        od::object rank;
        if (item.get_object().get(rank)) return false;
        static const KeyIndex kKeys = {"rank",         "pid",
                                       "steps",        Key(metric::kTrainingDataWaitRatio),
                                       "memory_bytes", "memory_anon_pss_bytes"};
        std::optional<double> number, pid, steps, wait, memory, anon;
        if (!ReadNumbers(rank, kKeys, {&number, &pid, &steps, &wait, &memory, &anon})) return false;
        std::optional<int> rank_number = WholeInt(number), rank_pid = WholeInt(pid);
        if (rank_number && rank_pid && steps) {
          f->ranks.push_back(RankFrame{*rank_number, *rank_pid, *steps, wait, memory, anon});
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

static_assert(FrameReader::kPadding == simdjson::SIMDJSON_PADDING);

FrameReader::Line FrameReader::Read(std::string_view text, Frame* f) {
  impl_->line = simdjson::padded_string(text);
  return ReadPadded(std::string_view(impl_->line.data(), impl_->line.size()), f);
}

FrameReader::Line FrameReader::ReadPadded(std::string_view text, Frame* f) {
  od::document doc;
  od::object top;
  if (impl_->parser.iterate(text.data(), text.size(), text.size() + kPadding).get(doc) ||
      doc.get_object().get(top)) {
    return Line::kNotJson;
  }
  *f = Frame{};
  std::optional<double> t, elapsed;
  for (auto field : top) {
    std::string_view key;
    if (!RawKey(field, &key)) return Line::kNotJson;
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
        static const KeyIndex kHost = {
            Key(metric::kHostSwapUsedBytes), Key(metric::kHostMemoryAvailableBytes),
            Key(metric::kHostMemoryLimitBytes), Key(metric::kHostCgroupMemoryCurrentBytes),
            Key(metric::kHostCpuIowaitRatio)};
        ok = ReadNumbers(
            object, kHost,
            {&f->host_swap_used_bytes, &f->host_memory_available_bytes, &f->host_memory_limit_bytes,
             &f->host_cgroup_memory_current_bytes, &f->host_cpu_iowait_ratio});
      } else if (key == "job") {
        static const KeyIndex kJob = {
            Key(metric::kJobCpuCores),           Key(metric::kJobCpuUtilRatio),
            Key(metric::kJobMemoryUtilRatio),    Key(metric::kJobProcesses),
            Key(metric::kJobMemoryBytes),        MinKey(metric::kJobMemoryBytes),
            Key(metric::kJobMemoryAnonPssBytes), MinKey(metric::kJobMemoryAnonPssBytes),
            Key(metric::kJobCpuPressureRatio),   Key(metric::kJobIoPressureRatio)};
        ok = ReadNumbers(object, kJob,
                         {&f->job_cpu_cores, &f->job_cpu_util_ratio, &f->job_memory_util_ratio,
                          &f->job_processes, &f->job_memory_bytes, &f->job_memory_min_bytes,
                          &f->job_memory_anon_pss_bytes, &f->job_memory_anon_pss_min_bytes,
                          &f->job_cpu_pressure_ratio, &f->job_io_pressure_ratio});
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

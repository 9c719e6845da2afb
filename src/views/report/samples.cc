#include "views/report/samples.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/json_shape.h"
#include "core/metrics.h"
#include "core/run_file.h"

namespace tv {
namespace {

namespace od = simdjson::ondemand;

constexpr float kNone = std::numeric_limits<float>::quiet_NaN();

struct Wanted {
  MetricId id;
  SeriesSpec spec;
};

constexpr size_t kRunWanted = 7, kGpuWanted = 8;

// The host, job and training metrics the charts draw, in legend order.
const std::array<Wanted, kRunWanted>& RunWanted() {
  static const std::array<Wanted, kRunWanted> kWanted = {{
      {metric::kHostCpuUtilRatio, {"cpu", "host CPU", "ratio"}},
      {metric::kJobCpuCores, {"cpu", "job cores", "cores"}},
      {metric::kHostMemoryUsedBytes, {"memory", "host used", "bytes"}},
      {metric::kJobMemoryBytes, {"memory", "job PSS", "bytes"}},
      {metric::kJobRssBytes, {"memory", "job RSS sum", "bytes"}},
      {metric::kTrainingStepsPerSecond, {"training", "steps/s", "rate"}},
      {metric::kTrainingDataWaitRatio, {"training", "data wait", "ratio"}},
  }};
  return kWanted;
}

// The per-GPU metrics the charts draw, in legend order.
const std::array<Wanted, kGpuWanted>& GpuWanted() {
  static const std::array<Wanted, kGpuWanted> kWanted = {{
      {metric::kGpuUtilRatio, {"gpu_busy", "{gpu} util", "ratio"}},
      {metric::kGpuSmActiveRatio, {"gpu_busy", "{gpu} SM active", "ratio"}},
      {metric::kGpuMemoryUsedBytes, {"gpu_memory", "{gpu} used", "bytes"}},
      {metric::kGpuJobMemoryBytes, {"gpu_memory", "{gpu} job", "bytes"}},
      {metric::kGpuAllocatorReservedBytes, {"gpu_memory", "{gpu} reserved", "bytes"}},
      {metric::kGpuAllocatorAllocatedBytes, {"gpu_memory", "{gpu} allocated", "bytes"}},
      {metric::kGpuPowerWatts, {"power", "{gpu} power", "watts"}},
      {metric::kGpuEnergyJoules, {"power", "{gpu} energy", "joules"}},
  }};
  return kWanted;
}

// Each training process's own series (training.ranks), "{rank}" replaced by
// "rank N" (or "pid P" for a process without a rank): its steps per second,
// from the difference of its step count between rows, and its data wait.
const std::array<SeriesSpec, 2>& RankSpecs() {
  static const std::array<SeriesSpec, 2> kSpecs = {{
      {"training", "{rank} steps/s", "rate"},
      {"training", "{rank} data wait", "ratio"},
  }};
  return kSpecs;
}

// One row's values before it is known to be whole.
struct Scratch {
  std::array<float, kRunWanted> run;
  struct Gpu {
    int index = -1;
    std::array<float, kGpuWanted> values;
  };
  std::vector<Gpu> gpus;
  size_t gpu_count = 0;
  struct Rank {
    int rank = -1;
    int64_t pid = 0;
    double steps = 0;
    bool has_steps = false;
    float data_wait = kNone;
  };
  std::vector<Rank> ranks;
};

class Reader {
 public:
  Reader() {
    for (const Wanted& w : RunWanted()) {
      run_keys_.push_back({ScopeName(Def(w.id).scope), JsonKey(Def(w.id))});
    }
    for (const Wanted& w : GpuWanted()) gpu_keys_.push_back(JsonKey(Def(w.id)));
    run_slot_.fill(-1);
  }

  // One line of `capacity` readable bytes (at least SIMDJSON_PADDING past `size`).
  void Line(const char* data, size_t size, size_t capacity, size_t number, bool cut) {
    if (size == 0) return;
    switch (Parse(data, size, capacity)) {
      case Kind::kRow:
        Commit();
        break;
      case Kind::kNotRow:
        break;
      case Kind::kNotJson:
        if (!cut && out_.skipped++ == 0) {
          out_.first_skipped = fmt::format(
              "{}:{}: {}", name_, number,
              WhyLineUnusable({data, size}, SampleRowShape(), "a row of samples.jsonl"));
        }
        break;
    }
  }

  RunSeries Finish() {
    size_t rows = out_.elapsed_s.size();
    for (Series& s : out_.series) s.values.resize(rows, kNone);
    std::stable_sort(out_.series.begin(), out_.series.end(), [](const Series& a, const Series& b) {
      if (a.gpu != b.gpu) return a.gpu < b.gpu;
      if (a.per_rank != b.per_rank) return !a.per_rank;
      if (a.rank != b.rank) return a.rank < b.rank;
      if (a.pid != b.pid) return a.pid < b.pid;
      return a.spec < b.spec;
    });
    out_.ranks_left_out = left_out_.size();
    return std::move(out_);
  }

  void set_name(std::string_view name) { name_ = name; }

 private:
  enum class Kind { kRow, kNotRow, kNotJson };

  Kind Parse(const char* data, size_t size, size_t capacity) {
    od::document doc;
    od::object top;
    if (parser_.iterate(data, size, capacity).get(doc) || doc.get_object().get(top)) {
      return Kind::kNotJson;
    }
    row_.run.fill(kNone);
    row_.gpu_count = 0;
    row_.ranks.clear();
    t_.reset();
    elapsed_.reset();
    for (auto field : top) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return Kind::kNotJson;
      od::value value;
      if (field.value().get(value)) return Kind::kNotJson;
      if (key == "t" || key == "elapsed_s") {
        double v = 0;
        if (value.get_double().get(v)) return Kind::kNotJson;
        (key == "t" ? t_ : elapsed_) = v;
      } else if (key == "host" || key == "job" || key == "training") {
        od::object object;
        if (value.get_object().get(object) || !ReadScope(key, object)) return Kind::kNotJson;
      } else if (key == "gpus") {
        od::array gpus;
        if (value.get_array().get(gpus)) return Kind::kNotJson;
        for (auto item : gpus) {
          od::object object;
          if (item.get_object().get(object) || !ReadGpu(object)) return Kind::kNotJson;
        }
      }
    }
    return t_ ? Kind::kRow : Kind::kNotRow;
  }

  bool ReadScope(std::string_view scope, od::object object) {
    for (auto field : object) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return false;
      if (scope == "training" && key == "ranks") {
        od::array ranks;
        if (field.value().get_array().get(ranks) || !ReadRanks(ranks)) return false;
        continue;
      }
      for (size_t i = 0; i < run_keys_.size(); ++i) {
        if (run_keys_[i].first != scope || run_keys_[i].second != key) continue;
        double v = 0;
        if (!field.value().get_double().get(v)) row_.run[i] = static_cast<float>(v);
        break;
      }
    }
    return true;
  }

  // training.ranks: each process's rank, pid, step count and data wait.
  bool ReadRanks(od::array ranks) {
    for (auto item : ranks) {
      od::object object;
      if (item.get_object().get(object)) return false;
      Scratch::Rank& r = row_.ranks.emplace_back();
      for (auto field : object) {
        std::string_view key;
        if (field.unescaped_key().get(key)) return false;
        int64_t n = 0;
        double v = 0;
        if (key == "rank") {
          if (!field.value().get_int64().get(n)) r.rank = static_cast<int>(n);
        } else if (key == "pid") {
          if (!field.value().get_int64().get(n)) r.pid = n;
        } else if (key == "steps") {
          if (!field.value().get_double().get(v)) {
            r.steps = v;
            r.has_steps = true;
          }
        } else if (key == "data_wait_ratio") {
          if (!field.value().get_double().get(v)) r.data_wait = static_cast<float>(v);
        }
      }
    }
    return true;
  }

  bool ReadGpu(od::object object) {
    if (row_.gpus.size() <= row_.gpu_count) row_.gpus.emplace_back();
    Scratch::Gpu& g = row_.gpus[row_.gpu_count];
    g.index = static_cast<int>(row_.gpu_count);
    g.values.fill(kNone);
    for (auto field : object) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return false;
      if (key == "index") {
        int64_t index = 0;
        if (!field.value().get_int64().get(index)) g.index = static_cast<int>(index);
        continue;
      }
      for (size_t i = 0; i < gpu_keys_.size(); ++i) {
        if (gpu_keys_[i] != key) continue;
        double v = 0;
        if (!field.value().get_double().get(v)) g.values[i] = static_cast<float>(v);
        break;
      }
    }
    ++row_.gpu_count;
    return true;
  }

  // Appends the parsed row to the columns, making a column for a metric seen
  // for the first time (earlier rows: none).
  void Commit() {
    size_t row = out_.elapsed_s.size();
    if (!first_t_) {
      first_t_ = *t_;
      out_.start_t = *t_ - elapsed_.value_or(0);
    }
    out_.elapsed_s.push_back(elapsed_ ? *elapsed_ : *t_ - *out_.start_t);
    for (size_t i = 0; i < RunWanted().size(); ++i) {
      if (std::isnan(row_.run[i])) continue;
      if (run_slot_[i] < 0) run_slot_[i] = NewSeries(&RunWanted()[i].spec, -1);
      Put(run_slot_[i], row, row_.run[i]);
    }
    CommitRanks(row);
    for (size_t g = 0; g < row_.gpu_count; ++g) {
      const Scratch::Gpu& gpu = row_.gpus[g];
      auto it = std::find_if(gpu_slots_.begin(), gpu_slots_.end(),
                             [&](const GpuSlots& s) { return s.index == gpu.index; });
      if (it == gpu_slots_.end()) {
        it = gpu_slots_.insert(gpu_slots_.end(), GpuSlots{gpu.index, {}});
        it->slot.fill(-1);
      }
      for (size_t i = 0; i < GpuWanted().size(); ++i) {
        if (std::isnan(gpu.values[i])) continue;
        if (it->slot[i] < 0) it->slot[i] = NewSeries(&GpuWanted()[i].spec, gpu.index);
        Put(it->slot[i], row, gpu.values[i]);
      }
    }
  }

  // The row's per-process values; a process past kMaxRankSeries is counted,
  // not drawn.
  void CommitRanks(size_t row) {
    double elapsed = out_.elapsed_s.back();
    for (const Scratch::Rank& r : row_.ranks) {
      // A process without a rank is told apart by its pid.
      std::pair<int, int64_t> key{r.rank, r.rank >= 0 ? 0 : r.pid};
      auto it = std::find_if(rank_slots_.begin(), rank_slots_.end(),
                             [&](const RankSlots& s) { return s.key == key; });
      if (it == rank_slots_.end()) {
        if (rank_slots_.size() >= kMaxRankSeries) {
          if (std::find(left_out_.begin(), left_out_.end(), key) == left_out_.end()) {
            left_out_.push_back(key);
          }
          continue;
        }
        it = rank_slots_.insert(rank_slots_.end(), RankSlots{key});
      }
      if (r.has_steps) {
        if (it->last && elapsed > it->last->first && r.steps >= it->last->second) {
          if (it->steps_slot < 0) it->steps_slot = NewRankSeries(0, r);
          Put(it->steps_slot, row,
              static_cast<float>((r.steps - it->last->second) / (elapsed - it->last->first)));
        }
        it->last = std::make_pair(elapsed, r.steps);
      }
      if (!std::isnan(r.data_wait)) {
        if (it->wait_slot < 0) it->wait_slot = NewRankSeries(1, r);
        Put(it->wait_slot, row, r.data_wait);
      }
    }
  }

  int NewRankSeries(size_t spec, const Scratch::Rank& r) {
    int slot = NewSeries(&RankSpecs()[spec], -1);
    Series& s = out_.series[slot];
    s.per_rank = true;
    s.rank = r.rank;
    s.pid = r.rank >= 0 ? 0 : r.pid;
    std::string who = r.rank >= 0 ? fmt::format("rank {}", r.rank) : fmt::format("pid {}", r.pid);
    s.label.replace(s.label.find("{rank}"), 6, who);
    return slot;
  }

  int NewSeries(const SeriesSpec* spec, int gpu) {
    Series s;
    s.spec = spec;
    s.gpu = gpu;
    s.label = std::string(spec->label);
    if (size_t at = s.label.find("{gpu}"); at != std::string::npos) {
      s.label.replace(at, 5, fmt::format("GPU {}", gpu));
    }
    out_.series.push_back(std::move(s));
    return static_cast<int>(out_.series.size() - 1);
  }

  void Put(int slot, size_t row, float v) {
    std::vector<float>& values = out_.series[slot].values;
    values.resize(row, kNone);
    values.push_back(v);
  }

  struct GpuSlots {
    int index;
    std::array<int, kGpuWanted> slot;
  };

  struct RankSlots {
    std::pair<int, int64_t> key;  // rank, and pid when the rank is -1
    int steps_slot = -1, wait_slot = -1;
    std::optional<std::pair<double, double>> last;  // elapsed_s, steps of its last row
  };

  od::parser parser_{kMaxJsonlLineBytes};  // no document larger than a line may be
  std::vector<std::pair<std::string_view, std::string_view>> run_keys_;  // scope, key
  std::vector<std::string_view> gpu_keys_;
  std::array<int, kRunWanted> run_slot_;
  std::vector<GpuSlots> gpu_slots_;
  std::vector<RankSlots> rank_slots_;
  std::vector<std::pair<int, int64_t>> left_out_;  // ranks past kMaxRankSeries
  Scratch row_;
  std::optional<double> t_, elapsed_, first_t_;
  std::string name_;
  RunSeries out_;
};

// Feeds the lines of `lines` to `reader`, each with simdjson's padding
// readable after it; the lines over the cap are counted in the result.
void ForEachLine(JsonlReader* lines, Reader* reader) {
  JsonlReader::Line line;
  while (lines->Next(&line)) {
    reader->Line(line.text.data(), line.text.size(), line.text.size() + simdjson::SIMDJSON_PADDING,
                 line.number, line.cut);
  }
}

}  // namespace

RunSeries ReadRunSeries(const std::string& path) {
  JsonlReader lines(kMaxJsonlLineBytes, simdjson::SIMDJSON_PADDING);
  if (Status s = lines.Open(path); !s.ok()) throw std::runtime_error(s.message());
  Reader reader;
  reader.set_name(path);
  ForEachLine(&lines, &reader);
  if (!lines.status().ok()) throw std::runtime_error(lines.status().message());
  RunSeries out = reader.Finish();
  out.long_lines = lines.long_lines();
  out.long_lines_note = LongLinesNote(lines, path);
  return out;
}

RunSeries ParseRunSeries(std::string_view text, std::string_view name) {
  JsonlReader lines(kMaxJsonlLineBytes, simdjson::SIMDJSON_PADDING);
  lines.OpenText(text);
  Reader reader;
  reader.set_name(name);
  ForEachLine(&lines, &reader);
  RunSeries out = reader.Finish();
  out.long_lines = lines.long_lines();
  out.long_lines_note = LongLinesNote(lines, name);
  return out;
}

}  // namespace tv

#include "views/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include "core/format.h"
#include "store/headline.h"
#include "views/cost_lines.h"

namespace tv {
namespace {

using OJson = nlohmann::ordered_json;

// The largest of `id`'s max over the GPUs.
std::optional<double> GpuPeak(const RunTotals& t, MetricId id) {
  std::optional<double> peak;
  for (const GpuTotals& g : t.gpus) {
    if (auto v = g.Max(id)) peak = std::max(peak.value_or(0), *v);
  }
  return peak;
}

// The mean of `field` over the complete epochs of `records` (cost epoch records).
std::optional<double> EpochMean(const std::vector<EpochCost>& records,
                                std::optional<double> EpochCost::*field) {
  double sum = 0;
  int n = 0;
  for (const EpochCost& e : records) {
    if (!e.complete) continue;
    if (auto v = e.*field) sum += *v, ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

// How a figure is shown and its change said.
enum class Shown {
  kDuration,
  kBytes,
  kShare,
  kScore,
  kNumber,
  kCores,
  kGpuHours,
  kKwh,
  kKg,
  kMoney
};

// How a job's figure is made of its nodes' (a run is a job of one node, whose
// figure is its own by every rule):
enum class Combine {
  kWhole,  // read once from the job's whole: its span, its summed cost and headline
  kSum,    // what the job used: the sum, unknown when a node lacks it
  kMax,    // a peak: the largest node's (what a node's limit meets)
  kMin,    // a pace or a score: the slowest or lowest node's (the job goes at it)
  kMean,   // a share: the mean over the nodes that have it
  kFirst,  // the first node's that has it (the loss rank 0 logs)
};

// What a figure is read from: a run's summary.json, its cost (an empty record
// when it has none) and its headline; for a job's whole, the first node's
// summary with the job's summed cost and its headline.
struct RunFigures {
  const RunSummary& summary;
  const CostRecord& cost;
  const RunHeadline& headline;
  std::optional<double> duration_s;  // a job's: its first start to its last end
};

// A figure of a run from its summary.json; the headline figures (GPU busy,
// energy, money, health) from its headline, as every view reads them.
struct Figure {
  std::string_view key;
  std::string_view what;
  Shown unit;
  Combine combine;
  std::function<std::optional<double>(const RunFigures&)> get;
};

std::optional<double> Combined(const RunValues& nodes, Combine how) {
  std::optional<double> out;
  int n = 0;
  for (const std::optional<double>& v : nodes) {
    if (!v) {
      if (how == Combine::kSum) return std::nullopt;
      continue;
    }
    if (how == Combine::kFirst) return v;
    if (!out) {
      out = v, n = 1;
      continue;
    }
    if (how == Combine::kMax) out = std::max(*out, *v);
    if (how == Combine::kMin) out = std::min(*out, *v);
    if (how == Combine::kSum || how == Combine::kMean) *out += *v, ++n;
  }
  if (out && how == Combine::kMean) *out /= n;
  return out;
}

const std::vector<Figure>& Figures() {
  static const std::vector<Figure> figures = {
      {"duration_s", "duration", Shown::kDuration, Combine::kWhole,
       [](const RunFigures& r) { return r.duration_s; }},
      {"epochs", "epochs", Shown::kNumber, Combine::kMin,
       [](const RunFigures& r) -> std::optional<double> {
         const std::vector<EpochRecord>& epochs = r.summary.epochs;
         if (epochs.empty()) return std::nullopt;
         return static_cast<double>(
             std::count_if(epochs.begin(), epochs.end(), [](const auto& e) { return e.complete; }));
       }},
      {"epoch_s", "time per epoch", Shown::kDuration, Combine::kMax,
       [](const RunFigures& r) -> std::optional<double> {
         double sum = 0;
         int n = 0;
         for (const EpochRecord& e : r.summary.epochs) {
           if (e.complete) sum += e.duration_s, ++n;
         }
         if (n == 0) return std::nullopt;
         return sum / n;
       }},
      {"steps_per_second", "steps/s", Shown::kNumber, Combine::kMin,
       [](const RunFigures& r) {
         return r.summary.totals.run.Value(metric::kTrainingStepsPerSecond);
       }},
      {"data_wait_ratio", "data wait", Shown::kShare, Combine::kMean,
       [](const RunFigures& r) {
         return r.summary.totals.run.Value(metric::kTrainingDataWaitRatio);
       }},
      {"gpu_busy_ratio", "GPU busy", Shown::kShare, Combine::kWhole,
       [](const RunFigures& r) { return r.headline.gpu_busy_ratio; }},
      {"gpu_memory_peak_bytes", "peak GPU memory (job)", Shown::kBytes, Combine::kMax,
       [](const RunFigures& r) { return GpuPeak(r.summary.totals, metric::kGpuJobMemoryBytes); }},
      {"allocator_peak_bytes", "peak allocator memory", Shown::kBytes, Combine::kMax,
       [](const RunFigures& r) {
         return GpuPeak(r.summary.totals, metric::kGpuAllocatorAllocatedBytes);
       }},
      {"job_memory_peak_bytes", "peak host memory (job)", Shown::kBytes, Combine::kMax,
       [](const RunFigures& r) { return r.summary.totals.run.Max(metric::kJobMemoryBytes); }},
      {"job_cpu_cores", "CPU cores (job, mean)", Shown::kCores, Combine::kSum,
       [](const RunFigures& r) { return r.summary.totals.run.Value(metric::kJobCpuCores); }},
      {"gpu_hours", "GPU-hours held", Shown::kGpuHours, Combine::kWhole,
       [](const RunFigures& r) { return r.cost.gpu_hours; }},
      {"wasted_gpu_hours", "GPU-hours wasted", Shown::kGpuHours, Combine::kWhole,
       [](const RunFigures& r) { return r.cost.wasted_gpu_hours; }},
      {"gpu_energy_kwh", "GPU energy", Shown::kKwh, Combine::kWhole,
       [](const RunFigures& r) { return r.headline.gpu_energy_kwh; }},
      {"energy_kwh", "energy", Shown::kKwh, Combine::kWhole,
       [](const RunFigures& r) { return r.headline.energy_kwh; }},
      {"epoch_energy_kwh", "energy per epoch", Shown::kKwh, Combine::kSum,
       [](const RunFigures& r) { return EpochMean(r.cost.epochs, &EpochCost::energy_kwh); }},
      {"co2e_kg", "CO2e (estimate)", Shown::kKg, Combine::kWhole,
       [](const RunFigures& r) { return r.cost.co2e_kg; }},
      {"money", "money", Shown::kMoney, Combine::kWhole,
       [](const RunFigures& r) { return r.headline.money; }},
      {"health", "health", Shown::kScore, Combine::kMin,
       [](const RunFigures& r) { return r.headline.health_score; }},
      {"loss", "last loss", Shown::kNumber, Combine::kFirst,
       [](const RunFigures& r) -> std::optional<double> {
         const std::vector<EpochRecord>& epochs = r.summary.epochs;
         if (epochs.empty()) return std::nullopt;
         return Logged(epochs.back(), "loss");
       }},
  };
  return figures;
}

std::string_view UnitName(Shown u) {
  switch (u) {
    case Shown::kDuration:
      return "seconds";
    case Shown::kBytes:
      return "bytes";
    case Shown::kShare:
      return "ratio";
    case Shown::kScore:
      return "score";
    case Shown::kCores:
      return "cores";
    case Shown::kGpuHours:
      return "gpu_hours";
    case Shown::kKwh:
      return "kwh";
    case Shown::kKg:
      return "kg";
    case Shown::kMoney:
      return "money";
    case Shown::kNumber:
      break;
  }
  return "";
}

std::optional<double> Change(std::optional<double> a, std::optional<double> b, Shown unit) {
  if (!a || !b) return std::nullopt;
  if (unit == Shown::kShare) return std::round((*b - *a) * 1e4) / 1e4;
  if (unit == Shown::kScore) return std::round((*b - *a) * 10) / 10;
  if (*a == 0) return std::nullopt;
  return std::round((*b - *a) / std::fabs(*a) * 1e4) / 1e4;
}

// Each epoch column's key in the JSON and how it is read: from the epoch
// record or its cost record.
using EpochGet = std::optional<double> (*)(const EpochRecord&, const EpochCost*);
struct EpochColumnDef {
  const char* key;
  EpochGet get;
  Combine combine;  // a job's epoch: its last node's time, slowest pace, summed energy
};
constexpr EpochColumnDef kEpochColumnDefs[kEpochColumns] = {
    {"duration_s",
     [](const EpochRecord& e, const EpochCost*) -> std::optional<double> { return e.duration_s; },
     Combine::kMax},
    {"steps_per_second", [](const EpochRecord& e, const EpochCost*) { return e.steps_per_second; },
     Combine::kMin},
    {"energy_kwh",
     [](const EpochRecord&, const EpochCost* cost) {
       return cost != nullptr ? cost->energy_kwh : std::nullopt;
     },
     Combine::kSum},
    {"loss", [](const EpochRecord& e, const EpochCost*) { return Logged(e, "loss"); },
     Combine::kFirst}};

OJson ValuesJson(const RunValues& values) {
  OJson out = OJson::array();
  for (const std::optional<double>& v : values) out.push_back(v ? OJson(*v) : OJson());
  return out;
}

std::string StartText(double t, const char* format) {
  std::time_t secs = static_cast<std::time_t>(t);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char text[32];
  std::strftime(text, sizeof(text), format, &tm);
  return text;
}

// The runs' labels, those that two runs share made unique with their start
// time: the time of day when that tells them apart, else the date too, else
// their place in the comparison.
std::vector<std::string> UniqueLabels(const std::vector<ComparedRun>& runs) {
  std::vector<std::string> names, labels;
  for (const ComparedRun& r : runs) names.push_back(r.label.empty() ? "run" : r.label);
  labels = names;
  for (size_t i = 0; i < names.size(); ++i) {
    std::vector<size_t> same;
    for (size_t j = 0; j < names.size(); ++j) {
      if (names[j] == names[i]) same.push_back(j);
    }
    if (same.size() < 2 || same[0] != i) continue;  // each group once, from its first
    bool told = false;
    for (const char* format : {"%H:%M:%S", "%Y-%m-%d %H:%M:%S"}) {
      std::vector<std::string> times;
      for (size_t j : same) {
        if (runs[j].start_t) times.push_back(StartText(*runs[j].start_t, format));
      }
      std::vector<std::string> sorted = times;
      std::sort(sorted.begin(), sorted.end());
      if (times.size() != same.size() ||
          std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
        continue;
      }
      for (size_t k = 0; k < same.size(); ++k) {
        labels[same[k]] = fmt::format("{} ({})", names[same[k]], times[k]);
      }
      told = true;
      break;
    }
    if (told) continue;
    for (size_t k = 0; k < same.size(); ++k) {
      std::string when = runs[same[k]].start_t
                             ? StartText(*runs[same[k]].start_t, "%Y-%m-%d %H:%M:%S") + ", "
                             : "";
      labels[same[k]] = fmt::format("{} ({}#{})", names[same[k]], when, k + 1);
    }
  }
  return labels;
}

// What a column's figures are read from: each node's summary, cost and
// headline, and the whole job's (a run's own).
struct ComparedColumn {
  const ComparedRun& run;
  std::vector<CostRecord> costs;  // each node's, an empty record where it has none
  std::vector<RunHeadline> headlines;
  CostRecord cost;  // the job's: its nodes' summed (AddCosts) when every node has one
  RunHeadline headline;
  std::optional<double> duration_s;  // its first start to its last end
  // Each node's complete epochs by number, with their cost records.
  std::vector<std::map<int64_t, std::pair<const EpochRecord*, const EpochCost*>>> epochs;

  explicit ComparedColumn(const ComparedRun& r) : run(r) {
    costs.reserve(r.summaries.size());
    std::optional<double> start, end;
    for (const RunSummary& s : r.summaries) {
      costs.push_back(s.cost.value_or(CostRecord{}));
      headlines.push_back(HeadlineOf(s));
      const RunOutcome& o = s.outcome;
      if (o.start_t) start = std::min(start.value_or(*o.start_t), *o.start_t);
      if (o.end_t) end = std::max(end.value_or(*o.end_t), *o.end_t);
    }
    if (r.summaries.size() == 1) {
      cost = costs[0], headline = headlines[0];
      duration_s = r.summaries[0].outcome.duration_s;
    } else if (!r.summaries.empty()) {
      bool costed = std::all_of(r.summaries.begin(), r.summaries.end(),
                                [](const RunSummary& s) { return s.cost.has_value(); });
      if (costed) cost = AddCosts(costs);
      headline = HeadlineOf(r.summaries[0], &cost);
      if (start && end) duration_s = *end - *start;
    }
    for (size_t i = 0; i < r.summaries.size(); ++i) {
      auto& m = epochs.emplace_back();  // points into the run's summaries and costs
      for (const EpochRecord& e : r.summaries[i].epochs) {
        if (e.complete) m[e.epoch].first = &e;
      }
      for (const EpochCost& e : costs[i].epochs) {
        auto it = e.epoch ? m.find(*e.epoch) : m.end();
        if (it != m.end()) it->second.second = &e;
      }
    }
  }
  ComparedColumn(const ComparedColumn&) = delete;
  ComparedColumn& operator=(const ComparedColumn&) = delete;

  std::optional<double> Value(const Figure& f) const {
    if (f.combine == Combine::kWhole) {
      if (run.summaries.empty()) return std::nullopt;
      return f.get(RunFigures{run.summaries[0], cost, headline, duration_s});
    }
    RunValues nodes;
    for (size_t i = 0; i < run.summaries.size(); ++i) {
      const RunSummary& s = run.summaries[i];
      nodes.push_back(f.get(RunFigures{s, costs[i], headlines[i], s.outcome.duration_s}));
    }
    return Combined(nodes, f.combine);
  }
  bool HasEpoch(int64_t epoch) const {
    return !epochs.empty() && std::all_of(epochs.begin(), epochs.end(),
                                          [&](const auto& m) { return m.count(epoch) > 0; });
  }
  std::optional<double> EpochValue(int64_t epoch, const EpochColumnDef& column) const {
    RunValues nodes;
    for (const auto& m : epochs) {
      const auto& [record, epoch_cost] = m.at(epoch);
      nodes.push_back(column.get(*record, epoch_cost));
    }
    return Combined(nodes, column.combine);
  }
};

}  // namespace

Comparison CompareRuns(const std::vector<ComparedRun>& runs) {
  Comparison out;
  std::vector<std::string> labels = UniqueLabels(runs);
  std::vector<std::unique_ptr<ComparedColumn>> columns;
  for (size_t i = 0; i < runs.size(); ++i) {
    Comparison::Run run{labels[i], "", runs[i].job, {}};
    for (const RunSummary& s : runs[i].summaries) run.run_dirs.push_back(s.outcome.run_dir);
    if (runs[i].job.empty()) {  // a run: its one directory
      if (!run.run_dirs.empty()) run.run_dir = run.run_dirs[0];
      run.run_dirs.clear();
    }
    out.runs.push_back(std::move(run));
    columns.push_back(std::make_unique<ComparedColumn>(runs[i]));
  }
  if (runs.empty()) return out;
  // The headline figures as every view reads them (store/headline.h); each
  // run's money is in the currency it was priced in.
  std::vector<std::string> currencies;
  currencies.reserve(columns.size());
  for (const auto& column : columns) currencies.push_back(column->headline.currency);
  for (const Figure& f : Figures()) {
    ComparedFigure c{f.key, f.what, UnitName(f.unit), {}, {}, {}};
    for (const auto& column : columns) c.values.push_back(column->Value(f));
    if (std::none_of(c.values.begin(), c.values.end(), [](const auto& v) { return v.has_value(); }))
      continue;
    for (size_t i = 0; i < c.values.size(); ++i) {
      bool comparable = f.unit != Shown::kMoney || currencies[i] == currencies[0];
      c.changes.push_back(i == 0 || !comparable ? std::nullopt
                                                : Change(c.values[0], c.values[i], f.unit));
    }
    if (f.unit == Shown::kMoney) {
      // One currency for every priced run: the comparison's.
      std::string common;
      bool one = true;
      for (size_t i = 0; i < c.values.size(); ++i) {
        c.currencies.push_back(c.values[i] ? currencies[i] : std::string());
        const std::string& currency = c.currencies.back();
        if (currency.empty()) continue;
        if (!common.empty() && common != currency) one = false;
        common = currency;
      }
      if (one) out.currency = common;
    }
    out.figures.push_back(std::move(c));
  }
  // Epochs every run (every node of a job) has complete, by number.
  if (columns[0]->epochs.empty()) return out;
  for (const auto& [epoch, first] : columns[0]->epochs[0]) {
    // A copy: a lambda may not capture a structured binding before clang 16.
    auto number = epoch;
    if (!std::all_of(columns.begin(), columns.end(),
                     [&](const auto& column) { return column->HasEpoch(number); }))
      continue;
    ComparedEpoch row;
    row.epoch = epoch;
    for (size_t k = 0; k < kEpochColumns; ++k) {
      RunValues values;
      for (const auto& column : columns) {
        values.push_back(column->EpochValue(number, kEpochColumnDefs[k]));
      }
      if (std::any_of(values.begin(), values.end(), [](const auto& v) { return v.has_value(); })) {
        row.columns[k] = std::move(values);
      }
    }
    out.epochs.push_back(std::move(row));
  }
  return out;
}

OJson ComparisonJson(const Comparison& c) {
  OJson out = {{"runs", OJson::array()}, {"figures", OJson::array()}, {"epochs", OJson::array()}};
  for (const Comparison::Run& r : c.runs) {
    if (r.job.empty()) {
      out["runs"].push_back({{"label", r.label}, {"run_dir", r.run_dir}});
    } else {
      out["runs"].push_back({{"label", r.label}, {"job", r.job}, {"run_dirs", r.run_dirs}});
    }
  }
  for (const ComparedFigure& f : c.figures) {
    OJson j = {{"key", f.key},
               {"what", f.what},
               {"unit", f.unit},
               {"values", ValuesJson(f.values)},
               {"changes", ValuesJson(f.changes)}};
    if (f.unit == "money") {
      OJson& in = j["currencies"] = OJson::array();
      for (const std::string& currency : f.currencies) {
        in.push_back(currency.empty() ? OJson() : OJson(currency));
      }
    }
    out["figures"].push_back(std::move(j));
  }
  for (const ComparedEpoch& e : c.epochs) {
    OJson row = {{"epoch", e.epoch}};
    for (size_t k = 0; k < kEpochColumns; ++k) {
      if (!e.columns[k].empty()) row[kEpochColumnDefs[k].key] = ValuesJson(e.columns[k]);
    }
    out["epochs"].push_back(std::move(row));
  }
  if (!c.currency.empty()) out["currency"] = c.currency;
  return out;
}

std::optional<double> RelativeChange(std::optional<double> a, std::optional<double> b) {
  return Change(a, b, Shown::kNumber);
}

}  // namespace tv

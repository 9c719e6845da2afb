#include "views/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <functional>
#include <map>
#include <optional>

#include "core/escape.h"
#include "core/format.h"
#include "core/headline.h"
#include "store/epoch_record.h"
#include "views/cost_lines.h"

namespace tv {
namespace {

using Json = nlohmann::ordered_json;

std::optional<double> At(const Json& j, std::initializer_list<std::string_view> path) {
  const Json* at = &j;
  for (std::string_view key : path) {
    if (!at->is_object()) return std::nullopt;
    auto it = at->find(key);
    if (it == at->end()) return std::nullopt;
    at = &*it;
  }
  if (!at->is_number()) return std::nullopt;
  return at->get<double>();
}

// The member `key` of `j`; null when `j` is not an object or lacks it (a
// summary whose cost could not be computed has a null "cost").
const Json& Member(const Json& j, std::string_view key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it != j.end() ? *it : kNull;
}

std::optional<double> Num(const Json& v) {
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

// A cost epoch record (summary.json cost.epochs[]) of an epoch cut short.
bool Complete(const Json& epoch) { return epoch.value("complete", true); }

// The summary's epoch records; none when it has none or they are of the
// wrong shape (ReadRunFiles refuses such a summary).
std::vector<EpochRecord> EpochsOf(const Json& summary) {
  std::vector<EpochRecord> epochs;
  if (!EpochsFromSummary(summary, &epochs).ok()) epochs.clear();
  return epochs;
}

// The largest of `key`'s "max" over the GPUs.
std::optional<double> GpuPeak(const Json& s, std::string_view key) {
  std::optional<double> peak;
  for (const Json& g : s.value("gpus", Json::array())) {
    if (auto v = At(g, {key, "max"})) peak = std::max(peak.value_or(0), *v);
  }
  return peak;
}

// The mean of `key` over the complete epochs of `records` (cost epoch records).
std::optional<double> EpochMean(const Json& records, std::string_view key) {
  double sum = 0;
  int n = 0;
  for (const Json& e : records) {
    if (!e.is_object() || !Complete(e)) continue;
    if (auto v = At(e, {key})) sum += *v, ++n;
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

enum class Unit {
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

// A figure of a run from its summary.json; the headline figures (GPU busy,
// energy, money, health) from its headline, as every view reads them.
struct Figure {
  std::string_view key;
  std::string_view what;
  Unit unit;
  std::function<std::optional<double>(const Json&, const RunHeadline&)> get;
};

const std::vector<Figure>& Figures() {
  static const std::vector<Figure> figures = {
      {"duration_s", "duration", Unit::kDuration,
       [](const Json& s, const RunHeadline&) { return At(s, {"duration_s"}); }},
      {"epochs", "epochs", Unit::kNumber,
       [](const Json& s, const RunHeadline&) -> std::optional<double> {
         std::vector<EpochRecord> epochs = EpochsOf(s);
         if (epochs.empty()) return std::nullopt;
         return static_cast<double>(
             std::count_if(epochs.begin(), epochs.end(), [](const auto& e) { return e.complete; }));
       }},
      {"epoch_s", "time per epoch", Unit::kDuration,
       [](const Json& s, const RunHeadline&) -> std::optional<double> {
         double sum = 0;
         int n = 0;
         for (const EpochRecord& e : EpochsOf(s)) {
           if (e.complete) sum += e.duration_s, ++n;
         }
         if (n == 0) return std::nullopt;
         return sum / n;
       }},
      {"steps_per_second", "steps/s", Unit::kNumber,
       [](const Json& s, const RunHeadline&) {
         return At(s, {"training", "steps_per_second", "mean"});
       }},
      {"data_wait_ratio", "data wait", Unit::kShare,
       [](const Json& s, const RunHeadline&) {
         return At(s, {"training", "data_wait_ratio", "mean"});
       }},
      {"gpu_busy_ratio", "GPU busy", Unit::kShare,
       [](const Json&, const RunHeadline& h) { return h.gpu_busy_ratio; }},
      {"gpu_memory_peak_bytes", "peak GPU memory (job)", Unit::kBytes,
       [](const Json& s, const RunHeadline&) { return GpuPeak(s, "job_memory_bytes"); }},
      {"allocator_peak_bytes", "peak allocator memory", Unit::kBytes,
       [](const Json& s, const RunHeadline&) { return GpuPeak(s, "allocator_allocated_bytes"); }},
      {"job_memory_peak_bytes", "peak host memory (job)", Unit::kBytes,
       [](const Json& s, const RunHeadline&) {
         return At(s, {"job", "memory_bytes", "max"});
       }},
      {"job_cpu_cores", "CPU cores (job, mean)", Unit::kCores,
       [](const Json& s, const RunHeadline&) {
         return At(s, {"job", "cpu_cores", "mean"});
       }},
      {"gpu_hours", "GPU-hours held", Unit::kGpuHours,
       [](const Json& s, const RunHeadline&) {
         return At(s, {"cost", "gpu_hours"});
       }},
      {"wasted_gpu_hours", "GPU-hours wasted", Unit::kGpuHours,
       [](const Json& s, const RunHeadline&) {
         return At(s, {"cost", "wasted_gpu_hours"});
       }},
      {"gpu_energy_kwh", "GPU energy", Unit::kKwh,
       [](const Json&, const RunHeadline& h) { return h.gpu_energy_kwh; }},
      {"energy_kwh", "energy", Unit::kKwh,
       [](const Json&, const RunHeadline& h) { return h.energy_kwh; }},
      {"epoch_energy_kwh", "energy per epoch", Unit::kKwh,
       [](const Json& s, const RunHeadline&) {
         const Json& epochs = Member(Member(s, "cost"), "epochs");
         return epochs.is_array() ? EpochMean(epochs, "energy_kwh") : std::nullopt;
       }},
      {"co2e_kg", "CO2e (estimate)", Unit::kKg,
       [](const Json& s, const RunHeadline&) {
         return At(s, {"cost", "co2e_kg"});
       }},
      {"money", "money", Unit::kMoney, [](const Json&, const RunHeadline& h) { return h.money; }},
      {"health", "health", Unit::kScore,
       [](const Json&, const RunHeadline& h) { return h.health_score; }},
      {"loss", "last loss", Unit::kNumber,
       [](const Json& s, const RunHeadline&) -> std::optional<double> {
         std::vector<EpochRecord> epochs = EpochsOf(s);
         if (epochs.empty()) return std::nullopt;
         return Logged(epochs.back(), "loss");
       }},
  };
  return figures;
}

std::string_view UnitName(Unit u) {
  switch (u) {
    case Unit::kDuration:
      return "seconds";
    case Unit::kBytes:
      return "bytes";
    case Unit::kShare:
      return "ratio";
    case Unit::kScore:
      return "score";
    case Unit::kCores:
      return "cores";
    case Unit::kGpuHours:
      return "gpu_hours";
    case Unit::kKwh:
      return "kwh";
    case Unit::kKg:
      return "kg";
    case Unit::kMoney:
      return "money";
    case Unit::kNumber:
      break;
  }
  return "";
}

Json Change(std::optional<double> a, std::optional<double> b, Unit unit) {
  if (!a || !b) return Json();
  if (unit == Unit::kShare) return std::round((*b - *a) * 1e4) / 1e4;
  if (unit == Unit::kScore) return std::round((*b - *a) * 10) / 10;
  if (*a == 0) return Json();
  return std::round((*b - *a) / std::fabs(*a) * 1e4) / 1e4;
}

// `x` with `decimals` decimals, or as many more (up to 6) as show two
// significant digits of a small value that would read as 0.
std::string Fixed(double x, int decimals) {
  double a = std::fabs(x);
  if (a > 0 && a < std::pow(10.0, -decimals)) {
    int needed = static_cast<int>(std::ceil(-std::log10(a))) + 1;
    decimals = std::clamp(needed, decimals, 6);
  }
  return fmt::format("{:.{}f}", x, decimals);
}

// One unit for a row of values of `unit`: what one of it is in base units,
// its decimals and its name.
struct Scale {
  double size;
  int decimals;
  std::string_view suffix;
};

// The scale the largest value of a row reads best in (as cost_lines.h and
// core/format.h choose for one value).
std::optional<Scale> RowScale(std::string_view unit, double largest) {
  if (unit == "gpu_hours") {
    if (largest < 1.0 / 60) return Scale{1.0 / 3600, 1, "GPU-s"};
    if (largest < 1) return Scale{1.0 / 60, 1, "GPU-min"};
    return Scale{1, 2, "GPU-h"};
  }
  if (unit == "kwh" || unit == "kg") {
    bool kwh = unit == "kwh";
    if (largest < 0.001) return Scale{0.001, 2, kwh ? "Wh" : "g"};
    if (largest < 1) return Scale{0.001, 1, kwh ? "Wh" : "g"};
    return Scale{1, 2, kwh ? "kWh" : "kg"};
  }
  if (unit == "bytes") {
    constexpr double kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024;
    if (largest >= kTiB) return Scale{kTiB, 2, "TiB"};
    if (largest >= 10 * kGiB) return Scale{kGiB, 1, "GiB"};
    if (largest >= kGiB) return Scale{kGiB, 2, "GiB"};
    if (largest >= kMiB) return Scale{kMiB, 0, "MiB"};
    if (largest >= kKiB) return Scale{kKiB, 0, "KiB"};
    return Scale{1, 0, "B"};
  }
  return std::nullopt;
}

// "1:02:03" for each when the longest is an hour or more, "2:05" when a
// minute or more ("0:45" then), else "4.2 s".
std::string Clock(double seconds, double longest) {
  if (longest < 60) return fmt::format("{:.1f} s", seconds);
  auto total = static_cast<long>(std::lround(seconds));
  long h = total / 3600, m = (total / 60) % 60, s = total % 60;
  if (longest >= 3600 - 0.5) return fmt::format("{}:{:02}:{:02}", h, m, s);
  return fmt::format("{}:{:02}", m, s);
}

// The cells of one row of `unit` ("-" for an unknown value), all in the unit
// its largest value reads best in; money in each run's `currencies`.
std::vector<std::string> RowCells(const Json& values, std::string_view unit,
                                  const std::vector<std::string>& currencies) {
  double largest = 0;
  for (const Json& v : values) {
    if (v.is_number()) largest = std::max(largest, std::fabs(v.get<double>()));
  }
  std::optional<Scale> scale = RowScale(unit, largest);
  std::vector<std::string> cells;
  for (size_t i = 0; i < values.size(); ++i) {
    const Json& v = values[i];
    if (!v.is_number()) {
      cells.push_back("-");
      continue;
    }
    double x = v.get<double>();
    if (scale) {
      cells.push_back(Fixed(x / scale->size, scale->decimals) + " " + std::string(scale->suffix));
    } else if (unit == "seconds") {
      cells.push_back(Clock(x, largest));
    } else if (unit == "ratio") {
      cells.push_back(FormatPercent(x));
    } else if (unit == "score") {
      cells.push_back(fmt::format("{:.0f}", x));
    } else if (unit == "cores") {
      cells.push_back(fmt::format("{:.2f}", x));
    } else if (unit == "money") {
      std::string cell = FormatMoney(x, i < currencies.size() ? currencies[i] : "");
      while (!cell.empty() && cell.back() == ' ') cell.pop_back();
      cells.push_back(cell);
    } else {
      cells.push_back(fmt::format("{:.4g}", x));
    }
  }
  return cells;
}

std::string ChangeText(const Json& c, std::string_view unit) {
  if (!c.is_number()) return "";
  double x = c.get<double>();
  if (unit == "ratio") return fmt::format("{:+.0f} pts", x * 100);
  if (unit == "score") return fmt::format("{:+.0f} pts", x);
  return fmt::format("{:+.0f}%", x * 100);
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

// Characters a terminal shows for UTF-8 `text` (one per code point).
size_t Width(std::string_view text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

// `text` in at most `width` characters: its start and end with "…" between.
std::string Shorten(const std::string& text, size_t width) {
  if (Width(text) <= width) return text;
  std::vector<size_t> starts;  // of each code point
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  size_t tail = (width - 1) / 2, head = width - 1 - tail;
  return text.substr(0, starts[head]) + "…" + text.substr(starts[starts.size() - tail]);
}

}  // namespace

Json CompareRuns(const std::vector<ComparedRun>& runs) {
  Json out = {{"runs", Json::array()}, {"figures", Json::array()}, {"epochs", Json::array()}};
  std::vector<std::string> labels = UniqueLabels(runs);
  for (size_t i = 0; i < runs.size(); ++i) {
    out["runs"].push_back(
        {{"label", labels[i]}, {"run_dir", runs[i].summary.value("run_dir", "")}});
  }
  if (runs.empty()) return out;
  // The headline figures as every view reads them (core/headline.h); each
  // run's money is in the currency it was priced in.
  std::vector<RunHeadline> headlines;
  std::vector<std::string> currencies;
  for (const ComparedRun& r : runs) {
    headlines.push_back(HeadlineOf(r.summary));
    currencies.push_back(headlines.back().currency);
  }
  for (const Figure& f : Figures()) {
    std::vector<std::optional<double>> values;
    for (size_t i = 0; i < runs.size(); ++i) values.push_back(f.get(runs[i].summary, headlines[i]));
    if (std::none_of(values.begin(), values.end(), [](const auto& v) { return v.has_value(); }))
      continue;
    Json j = {{"key", f.key}, {"what", f.what}, {"unit", UnitName(f.unit)}};
    Json vs = Json::array(), changes = Json::array(), money_in = Json::array();
    for (size_t i = 0; i < values.size(); ++i) {
      vs.push_back(values[i] ? Json(*values[i]) : Json());
      bool comparable = f.unit != Unit::kMoney || currencies[i] == currencies[0];
      changes.push_back(i == 0 || !comparable ? Json() : Change(values[0], values[i], f.unit));
      bool priced = values[i] && !currencies[i].empty();
      money_in.push_back(priced ? Json(currencies[i]) : Json());
    }
    j["values"] = std::move(vs);
    j["changes"] = std::move(changes);
    if (f.unit == Unit::kMoney) {
      j["currencies"] = money_in;
      // One currency for every priced run: the comparison's.
      std::string common;
      bool one = true;
      for (const Json& c : money_in) {
        if (!c.is_string()) continue;
        if (!common.empty() && common != c.get<std::string>()) one = false;
        common = c.get<std::string>();
      }
      if (one && !common.empty()) out["currency"] = common;
    }
    out["figures"].push_back(std::move(j));
  }
  // Epochs every run has (complete), by number.
  std::vector<std::vector<EpochRecord>> records;
  records.reserve(runs.size());
  for (const ComparedRun& r : runs) records.push_back(EpochsOf(r.summary));
  std::vector<std::map<int64_t, std::pair<const EpochRecord*, const Json*>>> by_run;
  for (size_t i = 0; i < runs.size(); ++i) {
    const ComparedRun& r = runs[i];
    std::map<int64_t, std::pair<const EpochRecord*, const Json*>> m;
    for (const EpochRecord& e : records[i]) {  // no copy: m points into records
      if (e.complete) m[e.epoch].first = &e;
    }
    if (auto c = r.summary.find("cost"); c != r.summary.end() && c->contains("epochs")) {
      for (const Json& e : (*c)["epochs"]) {
        bool numbered = e.contains("epoch") && e["epoch"].is_number_integer();
        auto it = numbered ? m.find(e["epoch"].get<int64_t>()) : m.end();
        if (it != m.end()) it->second.second = &e;
      }
    }
    by_run.push_back(std::move(m));
  }
  for (const auto& [epoch, first] : by_run[0]) {
    // A copy: a lambda may not capture a structured binding before clang 16.
    auto number = epoch;
    if (!std::all_of(by_run.begin(), by_run.end(), [&](const auto& m) { return m.count(number); }))
      continue;
    Json row = {{"epoch", epoch}};
    // Each epoch column: from the epoch record or its cost record.
    using Get = std::optional<double> (*)(const EpochRecord&, const Json*);
    static constexpr std::pair<const char*, Get> kColumns[] = {
        {"duration_s",
         [](const EpochRecord& e, const Json*) -> std::optional<double> { return e.duration_s; }},
        {"steps_per_second", [](const EpochRecord& e, const Json*) { return e.steps_per_second; }},
        {"energy_kwh",
         [](const EpochRecord&, const Json* cost) {
           return cost != nullptr ? At(*cost, {"energy_kwh"}) : std::nullopt;
         }},
        {"loss", [](const EpochRecord& e, const Json*) { return Logged(e, "loss"); }}};
    for (const auto& [key, get] : kColumns) {
      Json vs = Json::array();
      bool any = false;
      for (const auto& m : by_run) {
        const auto& [record, cost] = m.at(epoch);
        std::optional<double> v = get(*record, cost);
        any = any || v.has_value();
        vs.push_back(v ? Json(*v) : Json());
      }
      if (any) row[key] = std::move(vs);
    }
    out["epochs"].push_back(std::move(row));
  }
  return out;
}

std::string FormatComparison(const Json& c) {
  const Json& runs = c["runs"];
  const size_t n = runs.size();
  std::string currency = c.value("currency", std::string());
  // The figures' cells first, so that each column is as wide as its widest.
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  for (const Json& f : c["figures"]) {
    std::string unit = f.value("unit", "");
    std::vector<std::string> currencies(n, currency);
    if (auto it = f.find("currencies"); it != f.end() && it->is_array()) {
      for (size_t i = 0; i < n && i < it->size(); ++i) {
        if ((*it)[i].is_string()) currencies[i] = (*it)[i].get<std::string>();
      }
    }
    std::vector<std::string> cells = RowCells(f["values"], unit, currencies);
    for (size_t i = 0; i < cells.size() && i < f["changes"].size(); ++i) {
      if (std::string change = ChangeText(f["changes"][i], unit); !change.empty()) {
        cells[i] += " " + change;
      }
    }
    rows.emplace_back(f.value("what", ""), std::move(cells));
  }
  // A label is shortened only past kLongest characters, and then said whole above.
  constexpr size_t kWhat = 24, kColumn = 22, kLongest = 40;
  std::vector<std::string> heads, whole;
  bool shortened = false;
  for (size_t i = 0; i < n; ++i) {
    std::string head = fmt::format("{}: {}", static_cast<char>('A' + std::min<size_t>(i, 25)),
                                   VisibleText(runs[i].value("label", "")));
    whole.push_back(head);
    if (Width(head) > kLongest) {
      head = Shorten(head, kLongest);
      shortened = true;
    }
    heads.push_back(std::move(head));
  }
  std::vector<size_t> widths(n, kColumn);
  for (size_t i = 0; i < n; ++i) {
    widths[i] = std::max(widths[i], Width(heads[i]) + 2);
    for (const auto& [what, cells] : rows) {
      if (i < cells.size()) widths[i] = std::max(widths[i], Width(cells[i]) + 2);
    }
  }
  auto line = [&](const std::string& what, const std::vector<std::string>& cells) {
    std::string text = fmt::format("{:<{}}", what, kWhat);
    for (size_t i = 0; i < cells.size(); ++i) text += fmt::format("{:<{}}", cells[i], widths[i]);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    return text + "\n";
  };
  std::string out;
  if (shortened) {
    for (const std::string& w : whole) out += w + "\n";
    out += "\n";
  }
  out += line("", heads);
  for (const auto& [what, cells] : rows) out += line(what, cells);
  const Json& epochs = c["epochs"];
  if (epochs.empty()) return out;
  // A table: the epoch, then each figure for each run (B, C, ... with their change).
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> header = {"epoch"};
  constexpr std::pair<const char*, const char*> kColumns[] = {
      {"duration_s", "seconds"}, {"steps_per_second", ""}, {"energy_kwh", "kwh"}, {"loss", ""}};
  constexpr const char* kTitles[] = {"time", "steps/s", "energy", "loss"};
  std::vector<size_t> present;
  for (size_t k = 0; k < std::size(kColumns); ++k) {
    if (std::any_of(epochs.begin(), epochs.end(),
                    [&](const Json& e) { return e.contains(kColumns[k].first); })) {
      present.push_back(k);
      for (size_t i = 0; i < runs.size(); ++i) {
        header.push_back(
            fmt::format("{} {}", kTitles[k], static_cast<char>('A' + std::min<size_t>(i, 25))));
      }
    }
  }
  table.push_back(header);
  constexpr size_t kShown = 10;
  for (size_t row = 0; row < epochs.size(); ++row) {
    if (epochs.size() > 2 * kShown && row == kShown) {
      table.push_back({fmt::format("… {} more", epochs.size() - 2 * kShown)});
      row = epochs.size() - kShown;
    }
    const Json& e = epochs[row];
    std::vector<std::string> cells = {fmt::format("{}", e.value("epoch", 0))};
    for (size_t k : present) {
      auto [key, unit] = kColumns[k];
      for (size_t i = 0; i < runs.size(); ++i) {
        if (!e.contains(key)) {
          cells.push_back("-");
          continue;
        }
        std::string cell = RowCells(e[key], unit, {})[i];
        std::string change = ChangeText(Change(Num(e[key][0]), Num(e[key][i]), Unit::kNumber), "");
        if (i > 0 && !change.empty()) cell += " " + change;
        cells.push_back(cell);
      }
    }
    table.push_back(std::move(cells));
  }
  std::vector<size_t> column(header.size(), 0);
  for (const auto& cells : table) {
    if (cells.size() < column.size()) continue;  // the "… more" line
    for (size_t k = 0; k < cells.size(); ++k) column[k] = std::max(column[k], cells[k].size());
  }
  out += fmt::format("\nEpochs every run has ({}), by number\n", epochs.size());
  for (const auto& cells : table) {
    std::string line = " ";
    for (size_t k = 0; k < cells.size(); ++k) {
      line += fmt::format(" {:<{}}", cells[k], cells.size() < column.size() ? 0 : column[k]);
      if (k == 0 || (k - 1) % runs.size() == runs.size() - 1) line += " ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace tv

#include "views/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include "core/format.h"
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

bool Complete(const Json& epoch) { return epoch.value("complete", true); }

// The largest of `key`'s "max" over the GPUs.
std::optional<double> GpuPeak(const Json& s, std::string_view key) {
  std::optional<double> peak;
  for (const Json& g : s.value("gpus", Json::array())) {
    if (auto v = At(g, {key, "max"})) peak = std::max(peak.value_or(0), *v);
  }
  return peak;
}

// The mean of `key` over the complete epochs of `records`.
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

enum class Unit { kDuration, kBytes, kShare, kNumber, kCores, kGpuHours, kKwh, kKg, kMoney };

struct Figure {
  std::string_view key;
  std::string_view what;
  Unit unit;
  std::function<std::optional<double>(const Json&)> get;
};

const std::vector<Figure>& Figures() {
  static const std::vector<Figure> figures = {
      {"duration_s", "duration", Unit::kDuration,
       [](const Json& s) { return At(s, {"duration_s"}); }},
      {"epochs", "epochs", Unit::kNumber,
       [](const Json& s) -> std::optional<double> {
         const Json epochs = s.value("epochs", Json::array());
         if (epochs.empty()) return std::nullopt;
         return static_cast<double>(std::count_if(epochs.begin(), epochs.end(), Complete));
       }},
      {"epoch_s", "time per epoch", Unit::kDuration,
       [](const Json& s) { return EpochMean(s.value("epochs", Json::array()), "duration_s"); }},
      {"steps_per_second", "steps/s", Unit::kNumber,
       [](const Json& s) {
         return At(s, {"training", "steps_per_second", "mean"});
       }},
      {"data_wait_ratio", "data wait", Unit::kShare,
       [](const Json& s) {
         return At(s, {"training", "data_wait_ratio", "mean"});
       }},
      {"gpu_busy_ratio", "GPU busy", Unit::kShare,
       [](const Json& s) {
         return At(s, {"cost", "busy_ratio"});
       }},
      {"gpu_memory_peak_bytes", "peak GPU memory (job)", Unit::kBytes,
       [](const Json& s) { return GpuPeak(s, "job_memory_bytes"); }},
      {"allocator_peak_bytes", "peak allocator memory", Unit::kBytes,
       [](const Json& s) { return GpuPeak(s, "allocator_allocated_bytes"); }},
      {"job_memory_peak_bytes", "peak host memory (job)", Unit::kBytes,
       [](const Json& s) {
         return At(s, {"job", "memory_bytes", "max"});
       }},
      {"job_cpu_cores", "CPU cores (job, mean)", Unit::kCores,
       [](const Json& s) {
         return At(s, {"job", "cpu_cores", "mean"});
       }},
      {"gpu_hours", "GPU-hours held", Unit::kGpuHours,
       [](const Json& s) {
         return At(s, {"cost", "gpu_hours"});
       }},
      {"wasted_gpu_hours", "GPU-hours wasted", Unit::kGpuHours,
       [](const Json& s) {
         return At(s, {"cost", "wasted_gpu_hours"});
       }},
      {"energy_kwh", "energy", Unit::kKwh,
       [](const Json& s) {
         return At(s, {"cost", "energy_kwh"});
       }},
      {"epoch_energy_kwh", "energy per epoch", Unit::kKwh,
       [](const Json& s) {
         const Json& epochs = Member(Member(s, "cost"), "epochs");
         return epochs.is_array() ? EpochMean(epochs, "energy_kwh") : std::nullopt;
       }},
      {"co2e_kg", "CO2e (estimate)", Unit::kKg,
       [](const Json& s) {
         return At(s, {"cost", "co2e_kg"});
       }},
      {"money", "money", Unit::kMoney,
       [](const Json& s) {
         return At(s, {"cost", "money"});
       }},
      {"health", "health", Unit::kNumber,
       [](const Json& s) {
         return At(s, {"health", "score"});
       }},
      {"loss", "last loss", Unit::kNumber,
       [](const Json& s) -> std::optional<double> {
         const Json epochs = s.value("epochs", Json::array());
         if (epochs.empty()) return std::nullopt;
         return At(epochs.back(), {"logs", "loss"});
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
  if (*a == 0) return Json();
  return std::round((*b - *a) / std::fabs(*a) * 1e4) / 1e4;
}

std::string Value(const Json& v, std::string_view unit, const std::string& currency) {
  if (!v.is_number()) return "-";
  double x = v.get<double>();
  if (unit == "seconds") return FormatDuration(x);
  if (unit == "bytes") return FormatBytes(x);
  if (unit == "ratio") return FormatPercent(x);
  if (unit == "cores") return fmt::format("{:.2f}", x);
  if (unit == "gpu_hours") return FormatGpuHours(x);
  if (unit == "kwh") return FormatKwh(x);
  if (unit == "kg") return FormatKg(x);
  if (unit == "money") return FormatMoney(x, currency);
  return fmt::format("{:.4g}", x);
}

std::string ChangeText(const Json& c, std::string_view unit) {
  if (!c.is_number()) return "";
  double x = c.get<double>();
  if (unit == "ratio") return fmt::format("{:+.0f} pts", x * 100);
  return fmt::format("{:+.0f}%", x * 100);
}

}  // namespace

Json CompareRuns(const std::vector<ComparedRun>& runs) {
  Json out = {{"runs", Json::array()}, {"figures", Json::array()}, {"epochs", Json::array()}};
  for (const ComparedRun& r : runs) {
    out["runs"].push_back({{"label", r.label}, {"run_dir", r.summary.value("run_dir", "")}});
  }
  if (runs.empty()) return out;
  const Json& currency_of = Member(Member(runs[0].summary, "cost"), "currency");
  std::string currency = currency_of.is_string() ? currency_of.get<std::string>() : "";
  if (!currency.empty()) out["currency"] = currency;
  for (const Figure& f : Figures()) {
    std::vector<std::optional<double>> values;
    for (const ComparedRun& r : runs) values.push_back(f.get(r.summary));
    if (std::none_of(values.begin(), values.end(), [](const auto& v) { return v.has_value(); }))
      continue;
    Json j = {{"key", f.key}, {"what", f.what}, {"unit", UnitName(f.unit)}};
    Json vs = Json::array(), changes = Json::array();
    for (size_t i = 0; i < values.size(); ++i) {
      vs.push_back(values[i] ? Json(*values[i]) : Json());
      changes.push_back(i == 0 ? Json() : Change(values[0], values[i], f.unit));
    }
    j["values"] = std::move(vs);
    j["changes"] = std::move(changes);
    out["figures"].push_back(std::move(j));
  }
  // Epochs every run has (complete), by number.
  std::vector<std::map<int64_t, std::pair<const Json*, const Json*>>> by_run;
  for (const ComparedRun& r : runs) {
    std::map<int64_t, std::pair<const Json*, const Json*>> m;
    static const Json kNone = Json::array();
    auto found = r.summary.find("epochs");
    const Json& epochs = found != r.summary.end() ? *found : kNone;  // no copy: m points into it
    for (const Json& e : epochs) {
      if (e.is_object() && Complete(e) && e.contains("epoch") && e["epoch"].is_number_integer())
        m[e["epoch"].get<int64_t>()].first = &e;
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
    // Each epoch column: from the epoch record or its cost record, and where.
    struct Column {
      const char* key;
      bool from_cost;
      const char* at;
      const char* within;  // "" for none
    };
    static constexpr Column kColumns[] = {{"duration_s", false, "duration_s", ""},
                                          {"steps_per_second", false, "steps_per_second", ""},
                                          {"energy_kwh", true, "energy_kwh", ""},
                                          {"loss", false, "logs", "loss"}};
    for (const Column& column : kColumns) {
      Json vs = Json::array();
      bool any = false;
      for (const auto& m : by_run) {
        const auto& [record, cost] = m.at(epoch);
        const Json* from = column.from_cost ? cost : record;
        std::optional<double> v;
        if (from != nullptr) {
          v = *column.within != 0 ? At(*from, {column.at, column.within}) : At(*from, {column.at});
        }
        any = any || v.has_value();
        vs.push_back(v ? Json(*v) : Json());
      }
      if (any) row[column.key] = std::move(vs);
    }
    out["epochs"].push_back(std::move(row));
  }
  return out;
}

std::string FormatComparison(const Json& c) {
  const Json& runs = c["runs"];
  std::string currency = c.value("currency", std::string());
  constexpr size_t kWhat = 24, kColumn = 22;
  std::string out = fmt::format("{:<{}}", "", kWhat);
  for (size_t i = 0; i < runs.size(); ++i) {
    std::string label = fmt::format("{}: {}", static_cast<char>('A' + std::min<size_t>(i, 25)),
                                    runs[i].value("label", ""));
    if (label.size() > kColumn - 1) label = label.substr(0, kColumn - 2) + "…";
    out += fmt::format("{:<{}}", label, kColumn);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += "\n";
  for (const Json& f : c["figures"]) {
    std::string unit = f.value("unit", "");
    out += fmt::format("{:<{}}", f.value("what", ""), kWhat);
    for (size_t i = 0; i < f["values"].size(); ++i) {
      std::string cell = Value(f["values"][i], unit, currency);
      if (std::string change = ChangeText(f["changes"][i], unit); !change.empty()) {
        cell += " " + change;
      }
      out += fmt::format("{:<{}}", cell, kColumn);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
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
        std::string cell = Value(e[key][i], unit, currency);
        std::string change = ChangeText(Change(Num(e[key][0]), Num(e[key][i]), Unit::kNumber), "");
        if (i > 0 && !change.empty()) cell += " " + change;
        cells.push_back(cell);
      }
    }
    table.push_back(std::move(cells));
  }
  std::vector<size_t> widths(header.size(), 0);
  for (const auto& cells : table) {
    if (cells.size() < widths.size()) continue;  // the "… more" line
    for (size_t k = 0; k < cells.size(); ++k) widths[k] = std::max(widths[k], cells[k].size());
  }
  out += fmt::format("\nEpochs every run has ({}), by number\n", epochs.size());
  for (const auto& cells : table) {
    std::string line = " ";
    for (size_t k = 0; k < cells.size(); ++k) {
      line += fmt::format(" {:<{}}", cells[k], cells.size() < widths.size() ? 0 : widths[k]);
      if (k == 0 || (k - 1) % runs.size() == runs.size() - 1) line += " ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace tv

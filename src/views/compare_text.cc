// The comparison of runs as a terminal table (compare.h FormatComparison):
// each row's unit and scale, the cells and their changes, labels shortened to
// their columns.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/escape.h"
#include "core/format.h"
#include "views/compare.h"
#include "views/cost_lines.h"

namespace tv {
namespace {

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
std::vector<std::string> RowCells(const RunValues& values, std::string_view unit,
                                  const std::vector<std::string>& currencies) {
  double largest = 0;
  for (const std::optional<double>& v : values) {
    if (v) largest = std::max(largest, std::fabs(*v));
  }
  std::optional<Scale> scale = RowScale(unit, largest);
  std::vector<std::string> cells;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i]) {
      cells.push_back("-");
      continue;
    }
    double x = *values[i];
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

std::string ChangeText(std::optional<double> c, std::string_view unit) {
  if (!c) return "";
  double x = *c;
  if (unit == "ratio") return fmt::format("{:+.0f} pts", x * 100);
  if (unit == "score") return fmt::format("{:+.0f} pts", x);
  return fmt::format("{:+.0f}%", x * 100);
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

std::string FormatComparison(const Comparison& c) {
  const std::vector<Comparison::Run>& runs = c.runs;
  const size_t n = runs.size();
  // The figures' cells first, so that each column is as wide as its widest.
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  for (const ComparedFigure& f : c.figures) {
    std::vector<std::string> currencies(n, c.currency);
    for (size_t i = 0; i < n && i < f.currencies.size(); ++i) {
      if (!f.currencies[i].empty()) currencies[i] = f.currencies[i];
    }
    std::vector<std::string> cells = RowCells(f.values, f.unit, currencies);
    for (size_t i = 0; i < cells.size() && i < f.changes.size(); ++i) {
      if (std::string change = ChangeText(f.changes[i], f.unit); !change.empty()) {
        cells[i] += " " + change;
      }
    }
    rows.emplace_back(f.what, std::move(cells));
  }
  // A label is shortened only past kLongest characters, and then said whole above.
  constexpr size_t kWhat = 24, kColumn = 22, kLongest = 40;
  std::vector<std::string> heads, whole;
  bool shortened = false;
  for (size_t i = 0; i < n; ++i) {
    std::string head = fmt::format("{}: {}", static_cast<char>('A' + std::min<size_t>(i, 25)),
                                   VisibleText(runs[i].label));
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
  const std::vector<ComparedEpoch>& epochs = c.epochs;
  if (epochs.empty()) return out;
  // A table: the epoch, then each figure for each run (B, C, ... with their change).
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> header = {"epoch"};
  // Each EpochColumn's title and unit.
  constexpr std::pair<const char*, const char*> kColumns[kEpochColumns] = {
      {"time", "seconds"}, {"steps/s", ""}, {"energy", "kwh"}, {"loss", ""}};
  std::vector<size_t> present;
  for (size_t k = 0; k < kEpochColumns; ++k) {
    if (std::any_of(epochs.begin(), epochs.end(),
                    [&](const ComparedEpoch& e) { return !e.columns[k].empty(); })) {
      present.push_back(k);
      for (size_t i = 0; i < runs.size(); ++i) {
        header.push_back(fmt::format("{} {}", kColumns[k].first,
                                     static_cast<char>('A' + std::min<size_t>(i, 25))));
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
    const ComparedEpoch& e = epochs[row];
    std::vector<std::string> cells = {fmt::format("{}", e.epoch)};
    for (size_t k : present) {
      const RunValues& values = e.columns[k];
      for (size_t i = 0; i < runs.size(); ++i) {
        if (values.size() <= i) {
          cells.push_back("-");
          continue;
        }
        std::string cell = RowCells(values, kColumns[k].second, {})[i];
        std::string change = ChangeText(RelativeChange(values[0], values[i]), "");
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

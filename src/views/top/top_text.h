// The text pieces `trainvitals top` builds its frame from: cutting and padding
// by terminal columns, a line that never passes its width, bars, sparklines
// and tables whose columns give way on a narrow terminal. Pure.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/escape.h"
#include "core/format.h"
#include "views/top/top_frame.h"

namespace tv::top_text {

inline constexpr std::string_view kLevels[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
inline constexpr std::string_view kAsciiLevels = " .:-=+*#";

inline bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// `text` made visible (core/escape.h: another user's process name or command
// line may hold terminal controls), cut to `columns`, its last kept column an
// ellipsis when cut. Every span of the frame passes here.
inline std::string Cut(std::string_view text, int columns, bool unicode) {
  if (columns <= 0) return "";
  std::string visible;
  if (!IsPrintableAscii(text)) {
    visible = VisibleText(text);
    if (!unicode) {  // an ASCII terminal: one '?' per character beyond ASCII
      std::string ascii;
      for (char c : visible) {
        if (!IsContinuation(c)) ascii += static_cast<unsigned char>(c) < 0x80 ? c : '?';
      }
      visible = std::move(ascii);
    }
    text = visible;
  }
  if (TextColumns(text) <= columns) return std::string(text);
  std::string out;
  int kept = 0;
  for (size_t i = 0; i < text.size() && kept < columns - 1; ++i) {
    out += text[i];
    while (i + 1 < text.size() && IsContinuation(text[i + 1])) out += text[++i];
    ++kept;
  }
  return out + (unicode ? "…" : "~");
}

inline std::string Pad(std::string_view text, int columns, bool right, bool unicode) {
  std::string cut = Cut(text, columns, unicode);
  std::string fill(static_cast<size_t>(std::max(0, columns - TextColumns(cut))), ' ');
  return right ? fill + cut : cut + fill;
}

// One line built left to right, never past its width.
class Line {
 public:
  Line(int columns, bool unicode) : left_(columns), unicode_(unicode) {}
  Line& Add(std::string_view text, TopStyle style = TopStyle::kNormal) {
    std::string cut = Cut(text, left_, unicode_);
    left_ -= TextColumns(cut);
    if (!cut.empty()) spans_.push_back({std::move(cut), style});
    return *this;
  }
  int left() const { return left_; }
  TopLine Take() { return std::move(spans_); }

 private:
  TopLine spans_;
  int left_;
  bool unicode_;
};

inline std::string Glyph(double ratio, bool unicode) {
  int level = std::clamp(static_cast<int>(std::lround(ratio * 7)), 0, 7);
  return unicode ? std::string(kLevels[level]) : std::string(1, kAsciiLevels[level]);
}

// The last minutes in `columns` glyphs, each the mean of its share of them,
// the newest at the right.
inline std::string Sparkline(const std::deque<double>& values, int columns, bool unicode) {
  if (columns <= 0) return "";
  size_t n = values.size();
  size_t bucket = std::max<size_t>(1, (n + columns - 1) / columns);
  std::string out;
  int glyphs = 0;
  for (size_t end = n; end > 0 && glyphs < columns; ++glyphs) {
    size_t begin = end >= bucket ? end - bucket : 0;
    double sum = 0;
    for (size_t i = begin; i < end; ++i) sum += values[i];
    out.insert(0, Glyph(sum / static_cast<double>(end - begin), unicode));
    end = begin;
  }
  return std::string(static_cast<size_t>(columns - glyphs), ' ') + out;
}

// A bar of `columns` between brackets: `job` then `other` shares of 0..1.
inline void AddBar(Line& line, int columns, double job, double other, TopStyle job_style) {
  int a = std::clamp(static_cast<int>(std::lround(job * columns)), 0, columns);
  int b = std::clamp(static_cast<int>(std::lround((job + other) * columns)), a, columns);
  line.Add("[");
  if (a > 0) line.Add(std::string(a, job_style == TopStyle::kBarJob ? '#' : '|'), job_style);
  if (b > a) line.Add(std::string(b - a, '='), TopStyle::kBarOther);
  line.Add(std::string(columns - b, ' ')).Add("]");
}

inline TopStyle Level(double v, double warn, double bad) {
  return v >= bad ? TopStyle::kBad : v >= warn ? TopStyle::kWarn : TopStyle::kNormal;
}

inline std::string Rate(const std::optional<double>& bytes_per_s) {
  return bytes_per_s ? FormatBytes(*bytes_per_s) + "/s" : "-";
}

inline std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A table's columns: those of lowest `drop` go first when the width is short;
// the last column takes what is left.
struct Column {
  const char* title;
  int width;
  bool right;
  int drop;  // 0: never dropped
};

inline std::vector<bool> FitColumns(const std::vector<Column>& columns, int width, int last_min) {
  std::vector<bool> keep(columns.size(), true);
  auto used = [&] {
    int sum = 0;
    for (size_t i = 0; i + 1 < columns.size(); ++i) sum += keep[i] ? columns[i].width + 1 : 0;
    return sum;
  };
  for (int drop = 1; used() + last_min > width && drop < 10; ++drop) {
    for (size_t i = 0; i < columns.size(); ++i) keep[i] = keep[i] && columns[i].drop != drop;
  }
  return keep;
}

inline TopLine TableLine(const std::vector<Column>& columns, const std::vector<bool>& keep,
                         const std::vector<std::string>& cells, int width, bool unicode,
                         TopStyle style) {
  Line line(width, unicode);
  std::string text;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (!keep[i]) continue;
    if (i + 1 == columns.size()) {
      text += cells[i];
    } else {
      text += Pad(cells[i], columns[i].width, columns[i].right, unicode) + " ";
    }
  }
  line.Add(text, style);
  if (style == TopStyle::kSelected || style == TopStyle::kHeader) {
    line.Add(std::string(line.left(), ' '), style);  // the whole width
  }
  return line.Take();
}

}  // namespace tv::top_text

// The alert expression language (docs/alerts.md):
//   [AGG(] OPERAND [/ OPERAND] [[WINDOW]] [)] CMP NUMBER
// AGG: mean | max | min | last; WINDOW: a duration or "N samples"; OPERAND: a
// metric or "(a or b ...)"; CMP: < <= > >= == !=; NUMBER with % or a byte unit.
#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <vector>

#include "analysis/alerts/rules_file.h"
#include "core/near.h"

namespace tv {
namespace {

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
}

// The number at the start of `text` (and how long it is); nullopt when none.
std::optional<double> LeadingNumber(std::string_view text, size_t* length) {
  double v = 0;
  const char* begin = text.data();
  if (!text.empty() && text[0] == '+') ++begin;
  auto [end, ec] = std::from_chars(begin, text.data() + text.size(), v);
  if (ec != std::errc() || !std::isfinite(v)) return std::nullopt;
  *length = static_cast<size_t>(end - text.data());
  return v;
}

struct Suffix {
  std::string_view text;
  double factor;
};
constexpr Suffix kNumberSuffixes[] = {
    {"%", 0.01},
    {"KiB", 1024.0},
    {"MiB", 1048576.0},
    {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  AlertExpr Parse() {
    AlertExpr e;
    e.text = std::string(text_);
    Space();
    size_t start = pos_;
    std::string word = Word();
    std::optional<Aggregate> agg = AggregateNamed(word);
    if (agg && Peek() == '(') {
      ++pos_;
      e.aggregate = *agg;
      Ratio(&e);
      if (Peek() == '[') {
        Window(&e);
      } else if (*agg != Aggregate::kLast) {
        Fail(fmt::format("{}(...) needs a window before ')': {}(x[10m]) or {}(x[5 samples])", word,
                         word, word));
      }
      Expect(')');
    } else {
      pos_ = start;
      Ratio(&e);
      if (Peek() == '[') {
        Fail("a window needs an aggregation around it: mean(x[10m]), max(...), min(...)");
      }
    }
    e.compare = Comparison();
    e.threshold = Number();
    Space();
    if (pos_ < text_.size()) Fail("nothing more after the number");
    e.per_gpu = AnyGpu(e.numerator) || (e.denominator && AnyGpu(*e.denominator));
    Unit top = Def(e.numerator.alternatives[0].id).unit;
    e.unit = top;
    if (e.denominator) {
      e.unit = Def(e.denominator->alternatives[0].id).unit == top ? Unit::kRatio : Unit::kNone;
    }
    return e;
  }

 private:
  [[noreturn]] void Fail(std::string_view what) const {
    std::string_view at = text_.substr(std::min(pos_, text_.size()));
    throw ConfigError(fmt::format("at character {} ({}): {}", pos_ + 1,
                                  at.empty() ? "the end" : fmt::format("'{}'", at.substr(0, 20)),
                                  what));
  }
  void Space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  char Peek() {
    Space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  void Expect(char c) {
    if (Peek() != c) Fail(fmt::format("expected '{}'", c));
    ++pos_;
  }
  std::string Word() {
    Space();
    size_t start = pos_;
    while (pos_ < text_.size()) {
      if (IsNameChar(text_[pos_])) {
        ++pos_;
      } else if (text_.substr(pos_).starts_with("[].")) {  // gpus[].NAME
        pos_ += 2;
      } else {
        break;
      }
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  static std::optional<Aggregate> AggregateNamed(std::string_view w) {
    if (w == "mean" || w == "avg") return Aggregate::kMean;
    if (w == "max") return Aggregate::kMax;
    if (w == "min") return Aggregate::kMin;
    if (w == "last") return Aggregate::kLast;
    return std::nullopt;
  }
  static bool AnyGpu(const Operand& o) {
    for (const MetricRef& m : o.alternatives) {
      if (m.id.gpu) return true;
    }
    return false;
  }

  void Ratio(AlertExpr* e) {
    e->numerator = OperandHere();
    if (Peek() == '/') {
      ++pos_;
      e->denominator = OperandHere();
    }
  }

  Operand OperandHere() {
    Operand o;
    if (Peek() == '(') {
      ++pos_;
      o.alternatives.push_back(Metric());
      while (true) {
        size_t at = pos_;
        if (Word() != "or") {
          pos_ = at;
          break;
        }
        o.alternatives.push_back(Metric());
      }
      Expect(')');
      return o;
    }
    o.alternatives.push_back(Metric());
    size_t at = pos_;
    if (Word() == "or") {
      pos_ = at;
      Space();
      Fail("put alternatives in parentheses: (a or b)");
    }
    pos_ = at;
    return o;
  }

  MetricRef Metric() {
    Space();
    size_t start = pos_;
    std::string name = Word();
    if (name.empty()) {
      Fail("expected a metric: host.NAME, job.NAME, training.NAME or gpus[].NAME");
    }
    std::optional<MetricRef> ref = ResolveMetricName(name);
    if (!ref) {
      pos_ = start;
      std::string near = NearestMetric(name);
      Fail(fmt::format("unknown metric '{}'{} (docs/metrics.md lists them)", name,
                       near.empty() ? "" : fmt::format("; did you mean '{}'?", near)));
    }
    return *ref;
  }

  void Window(AlertExpr* e) {
    Expect('[');
    size_t close = text_.find(']', pos_);
    if (close == std::string_view::npos) Fail("expected ']' after the window");
    std::string_view inside = text_.substr(pos_, close - pos_);
    while (!inside.empty() && std::isspace(static_cast<unsigned char>(inside.back()))) {
      inside.remove_suffix(1);
    }
    while (!inside.empty() && std::isspace(static_cast<unsigned char>(inside.front()))) {
      inside.remove_prefix(1);
      ++pos_;
    }
    size_t n = 0;
    std::optional<double> count = LeadingNumber(inside, &n);
    std::string_view rest = inside.substr(count ? n : 0);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (count && (rest == "samples" || rest == "sample")) {
      if (*count < 1 || *count > 100000 || *count != std::floor(*count)) {
        Fail("a window of samples is a whole number from 1 to 100000");
      }
      e->window_rows = static_cast<int>(*count);
    } else {
      try {
        e->window_s = ParseDuration(inside);
      } catch (const ConfigError& err) {
        Fail(fmt::format("the window: {}", err.what()));
      }
      if (e->window_s <= 0) Fail("the window must be longer than 0 s");
    }
    pos_ = close + 1;
  }

  Compare Comparison() {
    Space();
    std::string_view rest = text_.substr(pos_);
    struct Op {
      std::string_view text;
      Compare compare;
    };
    static constexpr Op kOps[] = {{"<=", Compare::kLessEqual}, {">=", Compare::kGreaterEqual},
                                  {"==", Compare::kEqual},     {"!=", Compare::kNotEqual},
                                  {"<", Compare::kLess},       {">", Compare::kGreater}};
    for (const Op& op : kOps) {
      if (rest.starts_with(op.text)) {
        pos_ += op.text.size();
        return op.compare;
      }
    }
    Fail("expected a comparison: <, <=, >, >=, == or !=");
  }

  double Number() {
    Space();
    size_t n = 0;
    std::optional<double> v = LeadingNumber(text_.substr(pos_), &n);
    if (!v) Fail("expected a number (20%, 0.2, 85, 4GiB)");
    pos_ += n;
    for (const Suffix& s : kNumberSuffixes) {
      if (text_.substr(pos_).starts_with(s.text)) {
        pos_ += s.text.size();
        // 95% is 0.95 exactly: divide rather than multiply by 0.01.
        return s.text == "%" ? *v / 100 : *v * s.factor;
      }
    }
    return *v;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// Every name an operand may have, for "did you mean".
std::vector<std::string> AllMetricNames() {
  std::vector<std::string> out;
  for (const MetricDef& m : SampleMetrics()) {
    out.push_back(fmt::format("{}.{}", ScopeName(m.scope), m.name));
  }
  for (const MetricDef& m : GpuMetrics()) out.push_back(fmt::format("gpus[].{}", m.name));
  return out;
}

}  // namespace

std::optional<MetricRef> ResolveMetricName(std::string_view name) {
  bool gpu = name.starts_with("gpus[].");
  std::string_view scope;
  std::string_view key;
  if (gpu) {
    key = name.substr(7);
  } else {
    size_t dot = name.find('.');
    if (dot == std::string_view::npos) return std::nullopt;
    scope = name.substr(0, dot);
    key = name.substr(dot + 1);
  }
  std::span<const MetricDef> table = gpu ? GpuMetrics() : SampleMetrics();
  for (int pass = 0; pass < 2; ++pass) {
    bool row_max = pass == 1;
    std::string_view want = key;
    if (row_max) {
      if (!key.ends_with("_max")) break;
      want = key.substr(0, key.size() - 4);
    }
    for (size_t i = 0; i < table.size(); ++i) {
      const MetricDef& m = table[i];
      if (m.name != want || (!gpu && ScopeName(m.scope) != scope)) continue;
      if (row_max && !m.keep_max) return std::nullopt;
      return MetricRef{MetricId{gpu, i}, row_max, std::string(name)};
    }
  }
  return std::nullopt;
}

std::string NearestMetric(std::string_view name) {
  std::vector<std::string> names = AllMetricNames();
  std::vector<std::string_view> words(names.begin(), names.end());
  return std::string(NearestWord(name, words));
}

double ParseDuration(std::string_view text) {
  auto fail = [&] {
    throw ConfigError(fmt::format("'{}' is not a duration: give e.g. 30s, 10m, 1h30m", text));
  };
  std::string_view rest = text;
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
  if (rest.empty()) fail();
  size_t n = 0;
  if (std::optional<double> plain = LeadingNumber(rest, &n); plain && n == rest.size()) {
    if (*plain < 0) fail();
    return *plain;
  }
  double total = 0;
  while (!rest.empty()) {
    std::optional<double> v = LeadingNumber(rest, &n);
    if (!v || *v < 0) fail();
    rest.remove_prefix(n);
    struct Unit {
      std::string_view text;
      double seconds;
    };
    static constexpr Unit kUnits[] = {
        {"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
    bool matched = false;
    for (const Unit& u : kUnits) {
      if (rest.starts_with(u.text)) {
        total += *v * u.seconds;
        rest.remove_prefix(u.text.size());
        matched = true;
        break;
      }
    }
    if (!matched) fail();
  }
  return total;
}

AlertExpr ParseAlertExpr(std::string_view text) { return Parser(text).Parse(); }

}  // namespace tv

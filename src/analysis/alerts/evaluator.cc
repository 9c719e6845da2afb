#include "analysis/alerts/evaluator.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "analysis/alerts/window.h"
#include "analysis/hysteresis.h"
#include "core/format.h"

namespace tv {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool Holds(Compare c, double v, double threshold) {
  switch (c) {
    case Compare::kLess:
      return v < threshold;
    case Compare::kLessEqual:
      return v <= threshold;
    case Compare::kGreater:
      return v > threshold;
    case Compare::kGreaterEqual:
      return v >= threshold;
    case Compare::kEqual:
      return v == threshold;
    case Compare::kNotEqual:
      return v != threshold;
  }
  return false;
}

// A metric's value in a row, as samples.jsonl holds it; NaN when absent.
double ValueOf(const MetricRef& m, const std::vector<std::optional<Stat>>& values) {
  std::optional<Stat> s = FindStat(m.id, values);
  if (!s) return kNaN;
  const MetricDef& def = Def(m.id);
  return m.row_max ? RoundAsWritten(s->max, IsIntegral(def.unit)) : WrittenValue(def, *s);
}

double OperandValue(const Operand& o, const Row& row, const GpuRow* gpu) {
  for (const MetricRef& m : o.alternatives) {
    double v = ValueOf(m, m.id.gpu ? gpu->values : row.values);
    if (!std::isnan(v)) return v;
  }
  return kNaN;
}

}  // namespace

struct AlertEvaluator::Impl {
  struct Instance {
    int gpu = -1;
    bool used = false;  // exists (a GPU rule's slot for this index)
    uint64_t seen_row = 0;
    Window window;
    Hysteresis hysteresis;  // fires after `for`, resolves after keep_firing_for
    bool firing = false;
    bool held = false;  // on the last row
    double starts_at = 0;
    double notified_t = 0;
    std::optional<double> value;  // the latest
    // For the summary.
    int times_fired = 0;
    double first_fired_t = 0;
    std::optional<double> last_resolved_t;
    double firing_s = 0;
    std::optional<double> worst;  // the value furthest past the threshold while firing
  };
  struct RuleState {
    const AlertRule* rule = nullptr;
    int window_rows = 0;
    std::vector<Instance> instances;  // a host rule: one; a GPU rule: by GPU index
  };

  std::shared_ptr<const std::vector<AlertRule>> rules;
  double interval_s = 1;
  std::vector<RuleState> states;
  std::vector<bool> job_gpus;  // by GPU index: the job has used it
  bool processes_listed = false;
  uint64_t row_seq = 0;
  double last_t = 0;

  double Evaluate(const RuleState& rs, const Row& row, const GpuRow* gpu) const {
    const AlertExpr& e = rs.rule->expr;
    if (!e.finding.empty()) {
      for (const Row::Finding& f : row.findings) {
        if (f.active && f.id == e.finding) return 1;
      }
      return 0;
    }
    double v = OperandValue(e.numerator, row, gpu);
    if (e.denominator) {
      double d = OperandValue(*e.denominator, row, gpu);
      v = d != 0 ? v / d : kNaN;
    }
    return v;
  }

  void Step(RuleState& rs, Instance& in, double raw, double t, std::vector<AlertChange>* out) {
    const AlertRule& r = *rs.rule;
    double v = raw;
    if (rs.window_rows > 0) {
      in.window.Push(raw);
      v = in.window.Value(r.expr.aggregate);
    }
    bool holds;
    if (r.expr.finding.empty()) {
      in.value = std::isnan(v) ? std::nullopt : std::optional<double>(v);
      holds = !std::isnan(v) && Holds(r.expr.compare, v, r.expr.threshold);
    } else {
      holds = v > 0;
    }
    in.held = holds;
    Hysteresis::Edge edge = in.hysteresis.Feed(t, holds, in.firing, r.for_s, r.keep_firing_for_s);
    if (holds) {
      if (in.firing) {
        NoteWorst(r, in);
        if (r.repeat_s > 0 && t - in.notified_t >= r.repeat_s) {
          Change(rs, in, AlertNotice::State::kRepeat, t, out);
        }
      } else if (edge == Hysteresis::Edge::kRise) {
        in.firing = true;
        in.starts_at = t;
        if (in.times_fired++ == 0) in.first_fired_t = t;
        NoteWorst(r, in);
        Change(rs, in, AlertNotice::State::kFiring, t, out);
      }
      return;
    }
    if (!in.firing) return;
    if (edge == Hysteresis::Edge::kFall) {
      Resolve(rs, in, t, out);
    } else if (r.repeat_s > 0 && t - in.notified_t >= r.repeat_s) {
      Change(rs, in, AlertNotice::State::kRepeat, t, out);
    }
  }

  static void NoteWorst(const AlertRule& r, Instance& in) {
    if (!in.value) return;
    bool lower = r.expr.compare == Compare::kLess || r.expr.compare == Compare::kLessEqual;
    if (!in.worst || (lower ? *in.value < *in.worst : *in.value > *in.worst)) in.worst = in.value;
  }

  void Resolve(RuleState& rs, Instance& in, double t, std::vector<AlertChange>* out,
               bool run_ended = false) {
    in.firing = false;
    in.firing_s += t - in.starts_at;
    in.last_resolved_t = t;
    in.hysteresis.clear_since.reset();
    Change(rs, in, AlertNotice::State::kResolved, t, out);
    out->back().run_ended = run_ended;
  }

  static void Change(const RuleState& rs, Instance& in, AlertNotice::State state, double t,
                     std::vector<AlertChange>* out) {
    in.notified_t = t;
    out->push_back(AlertChange{rs.rule, in.gpu, state, t, in.starts_at, in.value, false, in.held});
  }

  bool InScope(const AlertRule& r, int gpu) const {
    if (r.all_gpus || !processes_listed) return true;
    return gpu < static_cast<int>(job_gpus.size()) && job_gpus[gpu];
  }

  void NoteJobGpus(const Row& row) {
    for (const GpuRow& g : row.gpus) {
      std::optional<Stat> procs = FindStat(metric::kGpuJobProcesses, g.values);
      std::optional<Stat> mem = FindStat(metric::kGpuJobMemoryBytes, g.values);
      if (procs) processes_listed = true;
      bool used = (procs && procs->max > 0) || (mem && mem->max > 0);
      if (!used || g.index < 0 || g.index > 4096) continue;
      if (static_cast<int>(job_gpus.size()) <= g.index) job_gpus.resize(g.index + 1, false);
      job_gpus[g.index] = true;
    }
  }

  Instance& GpuInstance(RuleState& rs, int index) {
    if (static_cast<int>(rs.instances.size()) <= index) rs.instances.resize(index + 1);
    Instance& in = rs.instances[index];
    if (!in.used) {
      in.used = true;
      in.gpu = index;
      in.window.Reset(rs.window_rows);
    }
    return in;
  }
};

AlertEvaluator::AlertEvaluator(std::shared_ptr<const std::vector<AlertRule>> rules,
                               double interval_s)
    : impl_(std::make_unique<Impl>()) {
  impl_->rules = std::move(rules);
  impl_->interval_s = interval_s > 0 ? interval_s : 1;
  for (const AlertRule& r : *impl_->rules) {
    Impl::RuleState rs;
    rs.rule = &r;
    if (r.expr.window_rows > 0) {
      rs.window_rows = r.expr.window_rows;
    } else if (r.expr.window_s > 0) {
      rs.window_rows =
          std::max(1, static_cast<int>(std::lround(r.expr.window_s / impl_->interval_s)));
    }
    if (!r.expr.per_gpu) {
      rs.instances.resize(1);
      rs.instances[0].used = true;
      rs.instances[0].window.Reset(rs.window_rows);
    }
    impl_->states.push_back(std::move(rs));
  }
}

AlertEvaluator::~AlertEvaluator() = default;
AlertEvaluator::AlertEvaluator(AlertEvaluator&&) noexcept = default;

void AlertEvaluator::OnRow(const Row& row, std::vector<AlertChange>* changes) {
  Impl& m = *impl_;
  m.NoteJobGpus(row);
  ++m.row_seq;
  m.last_t = row.t;
  for (Impl::RuleState& rs : m.states) {
    if (!rs.rule->expr.per_gpu) {
      m.Step(rs, rs.instances[0], m.Evaluate(rs, row, nullptr), row.t, changes);
      continue;
    }
    for (const GpuRow& g : row.gpus) {
      if (g.index < 0 || g.index > 4096 || !m.InScope(*rs.rule, g.index)) continue;
      Impl::Instance& in = m.GpuInstance(rs, g.index);
      in.seen_row = m.row_seq;
      m.Step(rs, in, m.Evaluate(rs, row, &g), row.t, changes);
    }
    // A GPU gone from the row has no value: what fires there resolves in time.
    for (Impl::Instance& in : rs.instances) {
      if (in.used && in.seen_row != m.row_seq && (in.firing || in.hysteresis.true_since)) {
        m.Step(rs, in, kNaN, row.t, changes);
      }
    }
  }
}

void AlertEvaluator::Finish(double t, std::vector<AlertChange>* changes) {
  for (Impl::RuleState& rs : impl_->states) {
    for (Impl::Instance& in : rs.instances) {
      if (in.used && in.firing) impl_->Resolve(rs, in, t, changes, /*run_ended=*/true);
    }
  }
}

void AlertEvaluator::States(std::vector<Row::Alert>* out) const {
  out->clear();
  for (const Impl::RuleState& rs : impl_->states) {
    for (const Impl::Instance& in : rs.instances) {
      if (in.used && in.times_fired > 0) {
        out->push_back(Row::Alert{rs.rule->name, rs.rule->severity, in.gpu, in.firing});
      }
    }
  }
}

std::string AlertValueText(const AlertRule& rule, double v) {
  switch (rule.expr.unit) {
    case Unit::kRatio:
      return FormatPercent(v);
    case Unit::kBytes:
      return FormatBytes(v);
    case Unit::kBytesPerSecond:
      return FormatBytes(v) + "/s";
    case Unit::kCelsius:
      return fmt::format("{:.0f} °C", v);
    case Unit::kWatts:
      return fmt::format("{:.0f} W", v);
    case Unit::kSeconds:
      return FormatDuration(v);
    default:
      return fmt::format("{:.4g}", v);
  }
}

std::vector<AlertRecord> AlertEvaluator::Summary() const {
  std::vector<AlertRecord> out;
  for (const Impl::RuleState& rs : impl_->states) {
    for (const Impl::Instance& in : rs.instances) {
      if (!in.used || in.times_fired == 0) continue;
      const AlertRule& r = *rs.rule;
      AlertRecord a;
      a.alert = r.name;
      a.severity = AlertSeverity(r);
      if (in.gpu >= 0) a.gpu = in.gpu;
      a.expr = r.expr.text;
      if (r.expr.finding.empty()) a.threshold = r.expr.threshold;
      a.times_fired = in.times_fired;
      a.first_fired_t = std::round(in.first_fired_t * 1000) / 1000;
      if (in.last_resolved_t) a.last_resolved_t = std::round(*in.last_resolved_t * 1000) / 1000;
      a.firing_s =
          std::round((in.firing_s + (in.firing ? impl_->last_t - in.starts_at : 0)) * 10) / 10;
      if (in.worst) a.worst_value = RoundAsWritten(*in.worst, false);
      a.summary = AlertSummaryText(r, in.gpu, in.worst);
      out.push_back(std::move(a));
    }
  }
  return out;
}

namespace {

// "job memory", "GPU 0 peak memory used", "host run dir free" for a metric as
// written ("job.memory_bytes", "gpus[].memory_used_bytes_max").
std::string MetricWords(const MetricRef& m, int gpu) {
  std::string_view text = m.text;
  size_t dot = text.find('.');
  std::string_view scope = dot == std::string_view::npos ? "" : text.substr(0, dot);
  std::string_view name = dot == std::string_view::npos ? text : text.substr(dot + 1);
  bool peak = name.ends_with("_max");
  if (peak) name.remove_suffix(4);
  // The value says its unit: "job memory 524 MiB", not "job memory bytes 524 MiB".
  for (std::string_view unit :
       {"_bytes_per_second", "_bytes", "_ratio", "_celsius", "_watts", "_joules", "_seconds"}) {
    if (name.ends_with(unit) && name.size() > unit.size()) {
      name.remove_suffix(unit.size());
      break;
    }
  }
  std::string words;
  if (scope == "gpus[]") {
    words = gpu >= 0 ? fmt::format("GPU {}", gpu) : "GPU";
  } else {
    words = std::string(scope);
  }
  if (peak) words += words.empty() ? "peak" : " peak";
  if (!words.empty()) words += ' ';
  for (char c : name) words += c == '_' ? ' ' : c;
  return words;
}

std::string OperandWords(const Operand& o, int gpu) {
  std::string words;
  for (const MetricRef& m : o.alternatives) {
    words += (words.empty() ? "" : " or ") + MetricWords(m, gpu);
  }
  return o.alternatives.size() > 1 ? "(" + words + ")" : words;
}

// "5 min", "1 h", "90 s".
std::string WindowWords(double seconds) {
  auto s = static_cast<long>(std::lround(seconds));
  if (s >= 3600 && s % 3600 == 0) return fmt::format("{} h", s / 3600);
  if (s >= 60 && s % 60 == 0) return fmt::format("{} min", s / 60);
  return fmt::format("{} s", s);
}

// "under", "over" or "at" `threshold`, as `value` stands to it.
std::string_view Side(double value, double threshold) {
  return value < threshold ? "under" : value > threshold ? "over" : "at";
}

}  // namespace

std::string AlertSubjectText(const AlertRule& rule, int gpu) {
  const AlertExpr& e = rule.expr;
  if (!e.finding.empty()) return fmt::format("the finding {}", e.finding);
  std::string words = OperandWords(e.numerator, gpu);
  if (e.denominator) words += " / " + OperandWords(*e.denominator, gpu);
  if (e.window_rows > 0 || e.window_s > 0) {
    std::string_view agg = e.aggregate == Aggregate::kMean  ? "mean"
                           : e.aggregate == Aggregate::kMax ? "max"
                           : e.aggregate == Aggregate::kMin ? "min"
                                                            : "last";
    std::string window =
        e.window_rows > 0 ? fmt::format("{} samples", e.window_rows) : WindowWords(e.window_s);
    words += fmt::format(" ({} over {})", agg, window);
  }
  return words;
}

std::string AlertResolvedText(const AlertRule& rule, int gpu, std::optional<double> value,
                              bool run_ended, bool held) {
  std::string subject = AlertSubjectText(rule, gpu);
  const AlertExpr& e = rule.expr;
  if (!e.finding.empty()) {
    if (run_ended) {
      return fmt::format("the run ended ({} {})", subject, held ? "was open" : "had closed");
    }
    return subject + " closed";
  }
  std::string threshold = AlertValueText(rule, e.threshold);
  if (run_ended) {
    if (!value) return fmt::format("the run ended ({} had no value)", subject);
    return fmt::format("the run ended ({} was {} {} {})", subject, AlertValueText(rule, *value),
                       Side(*value, e.threshold), threshold);
  }
  if (!value) return fmt::format("{} has no value now", subject);
  if (e.compare == Compare::kEqual) {
    return fmt::format("{} {}, no longer {}", subject, AlertValueText(rule, *value), threshold);
  }
  return fmt::format("{} {}, back {} {}", subject, AlertValueText(rule, *value),
                     Side(*value, e.threshold), threshold);
}

std::string AlertSummaryText(const AlertRule& rule, int gpu, std::optional<double> value) {
  std::string value_text = value ? AlertValueText(rule, *value) : std::string("no value");
  std::string threshold_text =
      rule.expr.finding.empty() ? AlertValueText(rule, rule.expr.threshold) : std::string();
  std::string gpu_text = gpu >= 0 ? std::to_string(gpu) : std::string();
  std::string_view tpl = rule.summary;
  std::string fallback;
  if (tpl.empty()) {
    fallback = rule.expr.finding.empty()
                   ? fmt::format("{}{}: {} ({{value}})", rule.name, gpu >= 0 ? " on GPU {gpu}" : "",
                                 rule.expr.text)
                   : fmt::format("{}: the finding {} is open", rule.name, rule.expr.finding);
    tpl = fallback;
  }
  std::string out;
  for (size_t i = 0; i < tpl.size(); ++i) {
    if (tpl[i] == '{') {
      size_t close = tpl.find('}', i);
      if (close != std::string_view::npos) {
        std::string_view key = tpl.substr(i + 1, close - i - 1);
        const std::string* fill = key == "gpu"         ? &gpu_text
                                  : key == "value"     ? &value_text
                                  : key == "threshold" ? &threshold_text
                                  : key == "name"      ? &rule.name
                                                       : nullptr;
        if (fill != nullptr) {
          out += *fill;
          i = close;
          continue;
        }
      }
    }
    out += tpl[i];
  }
  return out;
}

}  // namespace tv

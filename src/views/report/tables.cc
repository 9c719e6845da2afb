#include "views/report/tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/format.h"
#include "store/alert_record.h"
#include "store/cost_record.h"
#include "store/epoch_record.h"
#include "store/finding_record.h"
#include "views/report/page.h"

namespace tv {
namespace {

// A figure, said by `format`; empty when absent.
template <typename T>
std::string Or(const std::optional<T>& v, std::string (*format)(double)) {
  return v ? format(static_cast<double>(*v)) : "";
}

// Whole numbers whole ("36000", not "3.6e+04"), others to 4 significant digits.
std::string Plain(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}
std::string Cores(double v) { return fmt::format("{:.2f}", v); }
std::string Elapsed(double v) { return FormatDuration(std::max(0.0, v)); }
// GPU time: "16.0 h" from an hour up, else as a duration ("12:05", "4.2 s").
std::string Hours(double v) {
  return v >= 1 ? fmt::format("{:.1f} h", v) : FormatDuration(v * 3600);
}
std::string Mass(double kg) {
  return kg >= 1 ? fmt::format("{:.3g} kg", kg) : fmt::format("{:.3g} g", kg * 1000);
}

std::string Cell(const std::string& text) { return "<td>" + HtmlEscape(text) + "</td>"; }

std::string Table(const std::string& id, const std::string& caption,
                  const std::vector<std::string>& head, const std::vector<std::string>& rows) {
  if (rows.empty()) return "";
  std::string out = fmt::format("<section class=\"table\"><h3>{}</h3><table id=\"{}\"><thead><tr>",
                                HtmlEscape(caption), id);
  for (const std::string& h : head) out += "<th>" + HtmlEscape(h) + "</th>";
  out += "</tr></thead><tbody>";
  for (const std::string& r : rows) out += "<tr>" + r + "</tr>";
  out += "</tbody></table></section>\n";
  return out;
}

std::string Epochs(const ReportRun& run, const std::string& id) {
  if (!run.summary) return "";
  const std::vector<EpochRecord>& epochs = run.summary->epochs;
  std::vector<std::string> logs;  // the logged names, in order of first appearance
  for (const EpochRecord& e : epochs) {
    for (const auto& [name, value] : e.logs) {
      if (std::find(logs.begin(), logs.end(), name) == logs.end()) logs.push_back(name);
    }
  }
  std::vector<std::string> head = {"epoch",     "start",      "duration", "steps",
                                   "steps/s",   "data wait",  "GPU util", "GPU energy",
                                   "CPU cores", "memory peak"};
  head.insert(head.end(), logs.begin(), logs.end());
  // Each epoch's cost, when the run's cost has them (summary.json "cost").
  const CostRecord cost = run.cost.value_or(CostRecord{});
  const std::vector<EpochCost>& costs = cost.epochs;
  bool with_cost = !costs.empty();
  bool with_money = std::any_of(costs.begin(), costs.end(),
                                [](const EpochCost& c) { return c.money.has_value(); });
  if (with_cost) head.insert(head.end(), {"GPU hours (busy)", "CO2e"});
  if (with_money) head.emplace_back("cost");
  const std::string& currency = cost.currency;
  std::vector<std::string> rows;
  for (const EpochRecord& e : epochs) {
    const SpanResources& res = e.resources;
    std::string r = Cell(fmt::format("{}", e.epoch));
    r += Cell(Elapsed(e.start_t - run.start_t));
    std::string duration = FormatDuration(e.duration_s);
    if (!e.complete) duration += " (cut short)";
    r += Cell(duration);
    r += Cell(Plain(static_cast<double>(e.steps)));
    r += Cell(Or(e.steps_per_second, Plain));
    r += Cell(Or(res.data_wait_ratio, FormatPercent));
    r += Cell(Or(GpuMean(res, &SpanGpu::util_ratio_mean), FormatPercent));
    r += Cell(Or(GpuSum(res, &SpanGpu::energy_joules), FormatEnergy));
    r += Cell(Or(res.cpu_cores_mean, Cores));
    r += Cell(Or(res.memory_bytes_max, FormatBytes));
    for (const std::string& name : logs) r += Cell(Or(Logged(e, name), Plain));
    if (with_cost) {
      static const EpochCost kNone;
      const EpochCost* c = &kNone;
      for (const EpochCost& item : costs) {
        if (item.epoch == e.epoch) c = &item;
      }
      std::string hours = Or(c->gpu_hours, Hours);
      if (c->busy_gpu_hours) hours += " (" + Hours(*c->busy_gpu_hours) + ")";
      r += Cell(hours);
      r += Cell(Or(c->co2e_kg, Mass));
      if (with_money) {
        r += Cell(c->money ? fmt::format("{:.2f} {}", *c->money, currency) : "");
      }
    }
    rows.push_back(std::move(r));
  }
  return Table(id, "Epochs", head, rows);
}

std::string Phases(const ReportRun& run, const std::string& id) {
  if (!run.summary) return "";
  const PhaseRecords& phases = run.summary->phases;
  std::vector<std::string> rows;
  for (const auto& [name, p] : phases) {
    const SpanResources& res = p.resources;
    std::string r = Cell(name);
    r += Cell(FormatDuration(p.duration_s));
    r += Cell(Plain(static_cast<double>(p.count)));
    r += Cell(Or(p.share, FormatPercent));
    r += Cell(Or(res.data_wait_ratio, FormatPercent));
    r += Cell(Or(GpuMean(res, &SpanGpu::util_ratio_mean), FormatPercent));
    r += Cell(Or(res.cpu_cores_mean, Cores));
    r += Cell(Or(res.memory_bytes_max, FormatBytes));
    rows.push_back(std::move(r));
  }
  return Table(
      id, "Phases",
      {"phase", "duration", "count", "share", "data wait", "GPU util", "CPU cores", "memory peak"},
      rows);
}

// "gpu 1", "rank 2, pid 412", "memory host", "job": the subject's keys and values.
std::string Subject(const FindingSubject& subject) {
  std::string out;
  const nlohmann::ordered_json keys = SubjectJson(subject);
  for (const auto& [k, v] : keys.items()) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", k,
                       v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out.empty() ? "job" : out;
}

std::string Findings(const ReportRun& run, const std::string& id) {
  std::vector<std::string> rows;
  for (const FindingRecord& f : run.findings) {
    std::string_view severity = SeverityName(f.severity);
    std::string r =
        fmt::format("<td class=\"sev-{}\">{}</td>", HtmlEscape(severity), HtmlEscape(severity));
    r += Cell(f.id);
    r += Cell(Subject(f.subject));
    r += Cell(Elapsed(f.opened_t - run.start_t));
    std::string duration = FormatDuration(f.duration_s);
    if (!f.closed_t) duration += " (open at the end)";
    r += Cell(duration);
    r += Cell(f.message);
    std::string advice;
    for (const std::string& a : f.advice) advice += "<li>" + HtmlEscape(a) + "</li>";
    r += advice.empty() ? "<td></td>" : "<td><ul>" + advice + "</ul></td>";
    rows.push_back(std::move(r));
  }
  return Table(id, "Findings",
               {"severity", "finding", "subject", "opened", "lasted", "message", "advice"}, rows);
}

std::string Alerts(const ReportRun& run, const std::string& id) {
  std::vector<std::string> rows;
  if (!run.summary || !run.summary->alerts) return "";
  for (const AlertRecord& a : *run.summary->alerts) {
    std::string r = Cell(a.alert);
    r += Cell(std::string(SeverityName(a.severity)));
    r += Cell(a.gpu ? std::to_string(*a.gpu) : "");
    r += Cell(Plain(static_cast<double>(a.times_fired)));
    r += Cell(Elapsed(a.first_fired_t - run.start_t));
    r += Cell(FormatDuration(a.firing_s));
    r += Cell(Or(a.worst_value, Plain));
    r += Cell(Or(a.threshold, Plain));
    r += Cell(a.summary);
    rows.push_back(std::move(r));
  }
  return Table(id, "Alerts",
               {"alert", "severity", "GPU", "fired", "first fired", "firing", "worst value",
                "threshold", "summary"},
               rows);
}

std::string Cost(const ReportRun& run, const std::string& id) {
  if (!run.cost) return "";
  const CostRecord& cost = *run.cost;
  std::vector<std::string> rows;
  auto row = [&](const std::string& what, const std::string& value) {
    if (!value.empty()) rows.push_back(Cell(what) + Cell(value));
  };
  const std::string& currency = cost.currency;
  auto money = [&](double v) { return fmt::format("{:.2f} {}", v, currency); };
  row("GPUs used", Or(cost.gpus_used, Plain));
  row("GPU hours held", Or(cost.gpu_hours, Hours));
  std::string busy = Or(cost.busy_gpu_hours, Hours);
  if (!busy.empty() && !cost.busy_basis.empty()) busy += fmt::format(" (by {})", cost.busy_basis);
  row("GPU hours busy", busy);
  row("Busy share", Or(cost.busy_ratio, FormatPercent));
  row("GPU hours wasted", Or(cost.wasted_gpu_hours, Hours));
  const CostLost lost = cost.lost.value_or(CostLost{});
  row("Lost to start-up", Or(lost.startup_ratio, FormatPercent));
  row("Lost to input waits", Or(lost.data_wait_ratio, FormatPercent));
  row("Lost to evaluation", Or(lost.evaluation_ratio, FormatPercent));
  row("Lost to checkpoints", Or(lost.checkpoint_ratio, FormatPercent));
  row("Lost to stalls", Or(lost.stalled_ratio, FormatPercent));
  row("Lost to GPUs held idle", Or(lost.idle_gpu_ratio, FormatPercent));
  auto kwh = [](double v) { return FormatEnergy(v * 3.6e6); };
  if (auto v = cost.gpu_energy_kwh) row("GPU energy", kwh(*v));
  if (auto v = cost.cpu_energy_kwh) row("CPU energy", kwh(*v));
  if (auto v = cost.energy_kwh) {
    row("Energy", kwh(*v) + Or(cost.pue, [](double p) { return fmt::format(" (PUE {:.3g})", p); }));
  }
  if (auto v = cost.co2e_kg) {
    row("CO2e", Mass(*v) + (cost.co2e_estimate.value_or(false) ? " (grid average estimate)" : ""));
  }
  if (auto v = cost.money) row("Cost", money(*v));
  if (auto v = cost.money_gpu_hours) row("Cost of GPU hours", money(*v));
  if (auto v = cost.money_energy) row("Cost of energy", money(*v));
  if (const std::optional<CostForecast>& forecast = cost.forecast) {
    std::string f = Or(forecast->duration_s, FormatDuration);
    if (auto e = forecast->planned_epochs) f += fmt::format(" for {} epochs", *e);
    if (auto v = forecast->energy_kwh) f += ", " + kwh(*v);
    if (auto v = forecast->co2e_kg) f += ", " + Mass(*v) + " CO2e";
    if (auto v = forecast->money) f += ", " + money(*v);
    row("Whole run (forecast)", f);
  }
  return Table(id, "Cost", {"", ""}, rows);
}

}  // namespace

std::string FormatEnergy(double joules) {
  if (joules < 3600) return fmt::format("{:.0f} J", joules);
  if (joules < 3.6e6) return fmt::format("{:.3g} Wh", joules / 3600);
  return fmt::format("{:.3g} kWh", joules / 3.6e6);
}

std::string RunTables(const ReportRun& a, const ReportRun* b) {
  auto tables = [](const ReportRun& run, const std::string& prefix) {
    return Epochs(run, prefix + "epochs") + Phases(run, prefix + "phases") +
           Findings(run, prefix + "findings") + Alerts(run, prefix + "alerts") +
           Cost(run, prefix + "cost");
  };
  std::string out = "<section id=\"tables\">";
  if (b == nullptr) {
    out += tables(a, "");
  } else {
    out += "<h2>A</h2>" + tables(a, "a-") + "<h2>B</h2>" + tables(*b, "b-");
  }
  out += "</section>\n";
  return out;
}

std::string JobTables(const std::vector<ReportRun>& runs, const ReportJob& job) {
  std::string out = "<section id=\"tables\"><section id=\"verdict\"><h2>The job</h2>";
  std::optional<double> score = job.health.score;
  std::string health =
      score && std::isfinite(*score) ? fmt::format("{:.0f} / 100", *score) : job.health.note;
  if (!health.empty()) {
    out += "<p class=\"job-health\">Health: " + HtmlEscape(health);
    if (!job.health_node.empty()) {
      out += ", the health of its lowest node, " + HtmlEscape(job.health_node);
    }
    out += ".</p>";
  }
  // The job's findings and cost in the tables of a run: times from the first
  // node's start, on its lined-up clock.
  ReportRun whole;
  if (!runs.empty()) {
    whole.start_t =
        runs.front().start_t + (job.clock_offsets_s.empty() ? 0 : job.clock_offsets_s.front());
  }
  whole.findings = job.findings;
  whole.cost = job.cost;
  out += Findings(whole, "findings") + Cost(whole, "cost") + "</section>";
  for (size_t i = 0; i < runs.size(); ++i) {
    const ReportRun& run = runs[i];
    std::string prefix = fmt::format("n{}-", i);
    std::string tables = Epochs(run, prefix + "epochs") + Phases(run, prefix + "phases") +
                         Alerts(run, prefix + "alerts") + Cost(run, prefix + "cost");
    if (tables.empty()) continue;
    out += "<h2>" + HtmlEscape(i < job.nodes.size() ? job.nodes[i] : run.dir) + "</h2>" + tables;
  }
  out += "</section>\n";
  return out;
}

}  // namespace tv

#include "views/report/page.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/format.h"
#include "core/metrics.h"
#include "store/headline.h"
#include "views/cost_lines.h"
#include "views/report/assets.h"
#include "views/report/tables.h"
#include "views/verdict.h"

namespace tv {
namespace {

using Json = nlohmann::json;

std::string RunName(const ReportRun& run) {
  std::filesystem::path p(run.dir);
  std::string name = p.filename().string();
  return name.empty() ? p.parent_path().filename().string() : name;
}

std::string Command(const ReportRun& run) {
  // meta.json's command, else summary.json's (a run whose meta.json was left out).
  if (run.meta && !run.meta->command.empty()) return ShellCommand(run.meta->command);
  return ShellCommand(run.outcome().command);
}

std::string Gpus(const ReportRun& run) {
  if (!run.meta) return "";
  const std::vector<GpuInfo>& gpus = run.meta->gpus;
  if (gpus.empty()) return "none";
  // "2 × NVIDIA H100 80GB HBM3", models in order of first appearance.
  std::vector<std::pair<std::string, int>> models;
  for (const GpuInfo& g : gpus) {
    std::string name = g.name.empty() ? "GPU" : g.name;
    auto it = std::find_if(models.begin(), models.end(), [&](auto& m) { return m.first == name; });
    if (it == models.end()) {
      models.emplace_back(name, 1);
    } else {
      ++it->second;
    }
  }
  std::string out;
  for (const auto& [name, n] : models) {
    out += fmt::format("{}{} × {}", out.empty() ? "" : ", ", n, name);
  }
  return out;
}

std::string Start(const ReportRun& run) {
  if (!(run.start_t > 0 && run.start_t < 1e12)) return "";  // a time a file cannot mean
  auto tp = std::chrono::system_clock::time_point(
      std::chrono::seconds(static_cast<int64_t>(std::floor(run.start_t))));
  return fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", tp);
}

std::string Exit(const ReportRun& run) {
  if (!run.summary) return "still running, or ended without a summary";
  const RunOutcome& o = run.summary->outcome;
  std::string out = o.exit_code ? fmt::format("{}", *o.exit_code) : "—";
  if (o.exit_signal) out += fmt::format(" (signal {})", *o.exit_signal);
  return out;
}

// The run's own headline figures (store/headline.h), formatted as the summary
// prints them: the report computes none of them from per-GPU figures.
std::string Health(const ReportRun& run) {
  std::optional<double> score = run.health.score;
  return score && std::isfinite(*score) ? fmt::format("{:.0f} / 100", *score) : run.health.note;
}

// Where the run's time went, in the summary's words (health.goodput).
std::string TimeSpent(const ReportRun& run) { return TimeSpentWords(run.health); }

std::string GpuBusy(const ReportRun& run) {
  const RunHeadline& h = run.headline;
  if (!h.gpu_busy_ratio) return "";
  std::string out = FormatPercent(*h.gpu_busy_ratio);
  if (h.gpus_used)
    out += fmt::format(" of {} GPU{} the job used", *h.gpus_used, *h.gpus_used == 1 ? "" : "s");
  if (h.busy_basis == "sm_active_ratio") out += ", by SM activity";
  return out;
}

std::string GpuEnergy(const ReportRun& run) {
  const RunHeadline& h = run.headline;
  return h.gpu_energy_kwh ? FormatKwh(*h.gpu_energy_kwh) : "";
}

std::string Energy(const ReportRun& run) {
  const RunHeadline& h = run.headline;
  return h.energy_kwh ? FormatKwh(*h.energy_kwh) : "";
}

std::string Money(const ReportRun& run) {
  const RunHeadline& h = run.headline;
  return h.money ? FormatMoney(*h.money, h.currency) : "";
}

struct Headline {
  const char* what;
  std::function<std::string(const ReportRun&)> value;
};

// One column per run, headed by `heads` (none with a single run).
std::string HeaderTable(const std::vector<const ReportRun*>& runs,
                        const std::vector<std::string>& heads) {
  const std::vector<Headline> rows = {
      {"Run", RunName},
      {"Command", Command},
      {"Host", [](const ReportRun& r) { return r.meta ? r.meta->host : ""; }},
      {"GPUs", Gpus},
      {"Start", Start},
      {"Duration",
       [](const ReportRun& r) {
         auto d = r.outcome().duration_s;
         return d ? FormatDuration(*d) : FormatDuration(r.end_s) + " so far";
       }},
      {"Exit code", Exit},
      {"Health", Health},
      {"Time", TimeSpent},
      {"Steps/s (mean)",
       [](const ReportRun& r) {
         auto v = r.totals().run.Value(metric::kTrainingStepsPerSecond);
         return v ? fmt::format("{:.4g}", *v) : "";
       }},
      {"GPU busy", GpuBusy},
      {"GPU energy", GpuEnergy},
      {"Energy", Energy},
      {"Cost", Money},
      {"Job memory peak",
       [](const ReportRun& r) {
         auto v = r.totals().run.Max(metric::kJobMemoryBytes);
         return v ? FormatBytes(*v) : "";
       }},
      {"Rows", [](const ReportRun& r) { return fmt::format("{}", r.series.elapsed_s.size()); }},
  };
  std::string out = "<table class=\"headline\">";
  if (runs.size() > 1) {
    out += "<thead><tr><th></th>";
    for (const std::string& head : heads) out += "<th>" + HtmlEscape(head) + "</th>";
    out += "</tr></thead>";
  }
  out += "<tbody>";
  for (const Headline& h : rows) {
    std::vector<std::string> values;
    bool any = false;
    for (const ReportRun* run : runs) {
      values.push_back(h.value(*run));
      any = any || !values.back().empty();
    }
    if (!any) continue;
    out += fmt::format("<tr><th>{}</th>", h.what);
    for (const std::string& v : values) out += "<td>" + HtmlEscape(v) + "</td>";
    out += "</tr>";
  }
  out += "</tbody></table>";
  return out;
}

double ClockOffset(const ReportJob& job, size_t node) {
  return node < job.clock_offsets_s.size() ? job.clock_offsets_s[node] : 0;
}

std::string Notes(const ReportRun& run) {
  std::string out;
  if (run.series.skipped > 0) {
    out += fmt::format(
        "<p class=\"note\">{}: skipped {} line{} of samples.jsonl that {} not rows "
        "(first: {}).</p>",
        HtmlEscape(RunName(run)), run.series.skipped, run.series.skipped == 1 ? "" : "s",
        run.series.skipped == 1 ? "is" : "are", HtmlEscape(run.series.first_skipped));
  }
  if (size_t n = run.series.ranks_left_out; n > 0) {
    out += fmt::format(
        "<p class=\"note\">{}: {} more training process{} than the {} drawn one by one left "
        "out of the charts.</p>",
        HtmlEscape(RunName(run)), n, n == 1 ? "" : "es", kMaxRankSeries);
  }
  for (const std::string* note : {&run.series.long_lines_note, &run.events_note}) {
    if (!note->empty()) {
      out +=
          fmt::format("<p class=\"note\">{}: {}.</p>", HtmlEscape(RunName(run)), HtmlEscape(*note));
    }
  }
  return out;
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string ScriptSafe(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// The page around its parts: `header` (the table of headline figures and
// notes), `tables` (what goes under the charts), `data` (the charts' JSON).
std::string PageHtml(const std::string& title, const std::string& header, const std::string& tables,
                     const std::string& data) {
  std::string out;
  out.reserve(data.size() + UplotJs().size() + (size_t{64} << 10));
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"color-scheme\" content=\"light dark\">\n";
  out += fmt::format("<title>{}</title>\n<style>\n", HtmlEscape(title));
  out += UplotCss();
  out += "\n";
  out += ReportCss();
  out += "</style>\n</head>\n<body>\n<header>\n";
  out += fmt::format("<h1>{}</h1>\n", HtmlEscape(title));
  out += header;
  out += "\n</header>\n<main>\n";
  out += "<section id=\"charts\"><h2>Over time</h2>";
  out +=
      "<p class=\"hint\">Drag across a chart to zoom (all charts follow), double-click to "
      "zoom out. Shaded: epochs and phases; bars along the bottom: findings (red) and alerts "
      "(purple), named under each chart at the cursor.</p>";
  out += "<div id=\"chart-list\"></div>";
  out += "<noscript><p class=\"note\">The charts need JavaScript.</p></noscript></section>\n";
  out += tables;
  out += "\n</main>\n";
  out += fmt::format("<footer>Written by trainvitals {}.</footer>\n", TRAINVITALS_VERSION);
  out += "<script id=\"tv-data\" type=\"application/json\">";
  out += ScriptSafe(data);
  out += "</script>\n<script>\n";
  out += UplotJs();
  out += "\n</script>\n<script>\n";
  out += ReportJs();
  out += "\n</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace

std::string RenderPage(const ReportRun& a, const ReportRun* b, size_t buckets) {
  std::string title = "trainvitals report: " + RunName(a);
  if (b != nullptr) title += " vs " + RunName(*b);
  std::string data = "{\"runs\":[" + RunDataJson(a, "A", buckets);
  if (b != nullptr) data += "," + RunDataJson(*b, "B", buckets);
  data += "]}";
  std::vector<const ReportRun*> runs = {&a};
  if (b != nullptr) runs.push_back(b);
  std::string header =
      HeaderTable(runs, {"A: " + RunName(a), b != nullptr ? "B: " + RunName(*b) : ""});
  for (const ReportRun* run : runs) {
    if (run->judged_note.empty()) continue;
    header += fmt::format("<p class=\"note judged\">{}{}.</p>",
                          b != nullptr ? HtmlEscape(RunName(*run)) + ": " : "",
                          HtmlEscape(run->judged_note));
  }
  std::string tables = RunTables(a, b) + Notes(a);
  if (b != nullptr) tables += Notes(*b);
  return PageHtml(title, header, tables, data);
}

std::string RenderJobPage(const std::vector<ReportRun>& runs, const ReportJob& job,
                          size_t buckets) {
  std::string title =
      fmt::format("trainvitals report: {} — {} nodes",
                  job.id.empty() ? RunName(runs.front()) : "job " + job.id, runs.size());
  std::string data = "{\"runs\":[";
  std::vector<const ReportRun*> columns;
  std::vector<std::string> heads;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string& node = i < job.nodes.size() ? job.nodes[i] : RunName(runs[i]);
    // Its elapsed times from its start, moved to the first node's start in wall time.
    double offset = runs[i].start_t + ClockOffset(job, i) - runs[0].start_t - ClockOffset(job, 0);
    data += (i > 0 ? "," : "") + RunDataJson(runs[i], node, buckets, offset);
    columns.push_back(&runs[i]);
    heads.push_back(node);
  }
  data += "]}";
  std::string header = HeaderTable(columns, heads);
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].judged_note.empty()) continue;
    header += fmt::format("<p class=\"note judged\">{}: {}.</p>", HtmlEscape(heads[i]),
                          HtmlEscape(runs[i].judged_note));
  }
  for (const std::string& note : job.notes) {
    header += fmt::format("<p class=\"note clocks\">{}.</p>", HtmlEscape(note));
  }
  std::string tables = JobTables(runs, job);
  for (const ReportRun& run : runs) tables += Notes(run);
  return PageHtml(title, header, tables, data);
}

}  // namespace tv

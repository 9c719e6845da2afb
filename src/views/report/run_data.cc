#include "views/report/run_data.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <span>
#include <stdexcept>

#include "core/event_type.h"
#include "core/json_shape.h"
#include "core/run_file.h"
#include "store/alert_record.h"
#include "store/epoch_record.h"
#include "store/event_line.h"
#include "store/finding_record.h"
#include "store/marker_event_record.h"
#include "views/report/downsample.h"

namespace tv {
namespace {

// meta.json or summary.json: null when absent (or, for meta.json, empty: a run
// just starting). Throws std::runtime_error naming the file when it cannot be
// used; when not `fatal`, says so on stderr and leaves it out instead.
nlohmann::json ReadJsonFile(const std::filesystem::path& path, std::span<const JsonRule> shape,
                            bool fatal) {
  nlohmann::json j;
  Status s = ReadJsonDocument(path.string(), &j);
  if (s.code() == Status::Code::kNotFound) return nullptr;
  std::string problem = s.message();
  if (s.ok()) {
    problem = JsonShapeError(j, shape);
    if (problem.empty()) return j;
    problem = fmt::format("{}: {}", path.string(), problem);
  }
  std::error_code ec;
  if (!fatal && std::filesystem::is_regular_file(path, ec) &&
      std::filesystem::file_size(path, ec) == 0) {
    return nullptr;
  }
  if (fatal) throw std::runtime_error(problem);
  fmt::print(stderr, "trainvitals: {}; left out\n", problem);
  return nullptr;
}

// The lines of events.jsonl the time axis shows (none when it is absent).
// Throws std::runtime_error when it is there but cannot be read.
std::vector<nlohmann::json> ReadEvents(const std::filesystem::path& path, std::string* note) {
  std::vector<nlohmann::json> out;
  JsonlReader reader;
  Status s = reader.Open(path.string());
  if (s.code() == Status::Code::kNotFound) return out;
  if (!s.ok()) throw std::runtime_error(s.message());
  JsonlReader::Line line;
  std::string why;
  while (reader.Next(&line)) {
    // Cheap filter before parsing: process and marker events are most lines.
    if (line.text.find("\"epoch\"") == std::string::npos &&
        line.text.find("phase_") == std::string::npos &&
        line.text.find("alert_") == std::string::npos) {
      continue;
    }
    nlohmann::json e;
    if (ParseJsonLine(line.text, &e, &why) && JsonShapeError(e, EventShape()).empty() &&
        EventLineType(e)) {
      out.push_back(std::move(e));
    }
  }
  if (!reader.status().ok()) throw std::runtime_error(reader.status().message());
  *note = LongLinesNote(reader, path.string());
  return out;
}

// `v` with at most `decimals` decimals, trailing zeros dropped; null for NaN.
void AppendNumber(double v, int decimals, std::string* out) {
  if (!std::isfinite(v)) {
    out->append("null");
    return;
  }
  char text[64];
  auto end = fmt::format_to_n(text, sizeof(text) - 1, "{:.{}f}", v, decimals).out;
  char* stop = end;
  if (decimals > 0) {
    while (stop > text && stop[-1] == '0') --stop;
    if (stop > text && stop[-1] == '.') --stop;
  }
  std::string_view s(text, static_cast<size_t>(stop - text));
  if (s == "-0") s = "0";
  out->append(s);
}

// `s` as a JSON string; bytes that are not UTF-8 become U+FFFD.
std::string JsonString(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

struct Rounding {
  double factor;
  int decimals;
};

// What a chart shows of each scale: percent, MiB, Wh.
Rounding RoundingOf(std::string_view scale) {
  if (scale == "ratio") return {100, 1};
  if (scale == "bytes") return {1.0 / (1 << 20), 1};
  if (scale == "joules") return {1.0 / 3600, 2};
  if (scale == "cores" || scale == "rate") return {1, 2};
  return {1, 1};  // watts
}

}  // namespace

std::vector<Span> RunSpans(const RunSummary* summary, const std::vector<FindingRecord>& findings,
                           const std::vector<nlohmann::json>& events, double start_t,
                           double end_s) {
  std::vector<Span> spans;
  auto add_epoch = [&](const EpochRecord& e) {
    spans.push_back(Span{e.start_t - start_t, e.start_t - start_t + e.duration_s, "epoch",
                         fmt::format("epoch {}", e.epoch)});
  };
  if (summary != nullptr) {
    for (const EpochRecord& e : summary->epochs) add_epoch(e);
  } else {
    for (const auto& e : events) {
      EpochRecord epoch;
      if (EventLineType(e) == EventType::kEpoch && EpochFromJson(e, &epoch).ok()) add_epoch(epoch);
    }
  }
  // Phases of the lowest rank, as the summary counts them.
  std::vector<TrainingEvent> phase_events;
  for (const auto& e : events) {
    TrainingEvent m;
    if (MarkerEventFromJson(e, &m) &&
        (m.type == EventType::kPhaseBegin || m.type == EventType::kPhaseEnd)) {
      phase_events.push_back(std::move(m));
    }
  }
  std::optional<int> lowest;
  for (const TrainingEvent& m : phase_events) {
    if (m.type == EventType::kPhaseBegin) lowest = lowest ? std::min(*lowest, m.rank) : m.rank;
  }
  std::map<std::string, double> open;
  for (const TrainingEvent& m : phase_events) {
    if (!lowest || m.rank != *lowest) continue;
    double t = m.t - start_t;
    if (m.type == EventType::kPhaseBegin) {
      open.emplace(m.phase, t);
    } else if (auto it = open.find(m.phase); it != open.end()) {
      spans.push_back(Span{it->second, t, "phase", m.phase});
      open.erase(it);
    }
  }
  for (const auto& [phase, t] : open) spans.push_back(Span{t, end_s, "phase", phase});
  for (const FindingRecord& f : findings) {
    std::optional<double> end;
    if (f.closed_t) end = *f.closed_t - start_t;
    spans.push_back(
        Span{f.opened_t - start_t, end, "finding", fmt::format("{}: {}", f.id, f.message)});
  }
  std::map<std::string, size_t> firing;  // alert (and GPU) -> its span
  for (const auto& e : events) {
    AlertEventRecord alert;
    if (!AlertFromEventLine(e, &alert).ok()) continue;  // another event's line
    std::string name = alert.alert;
    if (alert.gpu) name += fmt::format(" (GPU {})", *alert.gpu);
    double t = alert.t - start_t;
    if (!alert.resolved) {
      firing[name] = spans.size();
      spans.push_back(Span{t, std::nullopt, "alert", name});
    } else if (auto it = firing.find(name); it != firing.end()) {
      spans[it->second].end_s = t;
      firing.erase(it);
    }
  }
  return spans;
}

ReportRun LoadReportRun(const std::string& dir, const ReportJudged& judged) {
  namespace fs = std::filesystem;
  fs::path path(dir);
  std::error_code ec;
  if (!fs::exists(path / "samples.jsonl", ec) && !fs::is_symlink(path / "samples.jsonl", ec)) {
    throw std::runtime_error(fmt::format("{} has no samples.jsonl: not a run directory", dir));
  }
  ReportRun run;
  run.dir = dir;
  if (nlohmann::json meta = ReadJsonFile(path / "meta.json", MetaShape(), /*fatal=*/false);
      meta.is_object()) {
    run.meta = MetaFromJson(meta);
  }
  if (nlohmann::json summary = ReadJsonFile(path / "summary.json", SummaryShape(), /*fatal=*/true);
      summary.is_object()) {
    // Its epoch and phase records, each key of the type the page reads; a key
    // or figure of the other parts that cannot be read is not shown.
    RunSummary& s = run.summary.emplace();
    if (Status read = RunSummaryFromJson(summary, &s); !read.ok()) {
      throw std::runtime_error((path / "summary.json").string() + ": " + read.message());
    }
    run.health = s.health.value_or(HealthRecord{});
    run.findings = s.findings;
    run.cost = judged.cost ? judged.cost : s.cost;
    run.headline = HeadlineOf(s, run.cost ? &*run.cost : nullptr);
  }
  if (judged.health) {
    run.health = *judged.health;
    run.findings = judged.findings;
  }
  run.judged_note = judged.note;
  run.series = ReadRunSeries((path / "samples.jsonl").string());
  if (run.series.elapsed_s.empty()) {
    std::string why =
        run.series.skipped > 0 ? fmt::format(" (first skipped: {})", run.series.first_skipped)
        : !run.series.long_lines_note.empty() ? " (" + run.series.long_lines_note + ")"
                                              : "";
    throw std::runtime_error(
        fmt::format("{}: no rows to report{}", (path / "samples.jsonl").string(), why));
  }
  std::optional<double> start = run.meta ? run.meta->start_t : std::nullopt;
  if (!start) start = run.series.start_t;
  if (!start) start = run.outcome().start_t;
  run.start_t = start.value_or(0);
  if (!run.series.elapsed_s.empty()) run.end_s = run.series.elapsed_s.back();
  run.end_s = std::max(run.end_s, run.outcome().duration_s.value_or(0));
  // A run still being written has no summary: its findings so far, if judged.
  run.spans = RunSpans(run.summary ? &*run.summary : nullptr, run.findings,
                       ReadEvents(path / "events.jsonl", &run.events_note), run.start_t, run.end_s);
  return run;
}

const RunOutcome& ReportRun::outcome() const {
  static const RunOutcome kNone;
  return summary ? summary->outcome : kNone;
}

const RunTotals& ReportRun::totals() const {
  static const RunTotals kNone;
  return summary ? summary->totals : kNone;
}

std::string RunDataJson(const ReportRun& run, const std::string& label, size_t buckets,
                        double x_offset_s) {
  std::vector<const std::vector<float>*> ys;
  for (const Series& s : run.series.series) ys.push_back(&s.values);
  Downsampled d = Downsample(run.series.elapsed_s, ys, buckets);
  std::string out = "{\"label\":" + JsonString(label) + ",\"end\":";
  AppendNumber(run.end_s + x_offset_s, 2, &out);
  out += ",\"x\":[";
  for (size_t i = 0; i < d.x.size(); ++i) {
    if (i > 0) out += ',';
    AppendNumber(d.x[i] + x_offset_s, 2, &out);
  }
  out += "],\"series\":[";
  for (size_t s = 0; s < run.series.series.size(); ++s) {
    const Series& series = run.series.series[s];
    Rounding r = RoundingOf(series.spec->scale);
    if (s > 0) out += ',';
    out +=
        fmt::format("{{\"chart\":\"{}\",\"label\":{},\"scale\":\"{}\",\"gpu\":{},\"v\":[",
                    series.spec->chart, JsonString(series.label), series.spec->scale, series.gpu);
    for (size_t i = 0; i < d.ys[s].size(); ++i) {
      if (i > 0) out += ',';
      AppendNumber(d.ys[s][i] * r.factor, r.decimals, &out);
    }
    out += "]}";
  }
  out += "],\"spans\":[";
  for (size_t i = 0; i < run.spans.size(); ++i) {
    const Span& sp = run.spans[i];
    if (i > 0) out += ',';
    out += '[';
    AppendNumber(sp.start_s + x_offset_s, 2, &out);
    out += ',';
    AppendNumber(sp.end_s.value_or(NAN) + x_offset_s, 2, &out);
    out += fmt::format(",\"{}\",{}]", sp.kind, JsonString(sp.label));
  }
  out += "]}";
  return out;
}

}  // namespace tv

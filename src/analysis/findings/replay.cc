#include "analysis/findings/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "analysis/findings/analyzer.h"

namespace tv {
namespace {

// Calls `line(text, number, cut)` for each non-empty line of `path`; `cut`:
// the last line, without its newline (a run still being written).
template <typename Line>
void ForEachLine(const std::string& path, Line&& line) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  size_t number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (!text.empty()) line(std::string_view(text), number, in.eof());
  }
}

// Counts a line that is not JSON (unless it is the cut last line).
void Skip(const std::string& path, size_t number, bool cut, Verdict* v) {
  if (cut) return;
  if (v->skipped++ == 0) v->skipped_first = fmt::format("{}:{}: not JSON", path, number);
}

}  // namespace

Verdict Replay(const std::string& run_dir, const Thresholds& thresholds) {
  namespace fs = std::filesystem;
  fs::path dir(run_dir);
  std::string samples = (dir / "samples.jsonl").string();
  if (!fs::exists(samples)) {
    throw std::runtime_error(fmt::format("{} has no samples.jsonl: not a run directory", run_dir));
  }
  Verdict v;
  double interval_s = 1;
  {
    std::ifstream in(dir / "meta.json");
    nlohmann::json meta = nlohmann::json::parse(in, nullptr, false);
    if (meta.is_object() && meta.contains("interval_s") && meta["interval_s"].is_number()) {
      interval_s = meta["interval_s"].get<double>();
    }
  }
  std::vector<Mark> marks;
  JobEnd job_end;
  std::string events_path = (dir / "events.jsonl").string();
  ForEachLine(events_path, [&](std::string_view text, size_t number, bool cut) {
    nlohmann::json e = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (e.is_discarded()) return Skip(events_path, number, cut, &v);
    Mark m;
    if (MarkFromEvent(e, &m)) marks.push_back(std::move(m));
    JobEndFromEvent(e, &job_end);
    if (e.is_object() && e.value("type", "") == "end") v.ended = true;
  });
  std::stable_sort(marks.begin(), marks.end(),
                   [](const Mark& a, const Mark& b) { return a.t < b.t; });
  v.ended = v.ended || fs::exists(dir / "summary.json");

  Analyzer analyzer(thresholds, interval_s);
  std::vector<Event> events;  // the findings' own events, not needed here
  size_t next_mark = 0;
  Frame frame;
  FrameReader reader;
  double last_t = 0;
  ForEachLine(samples, [&](std::string_view text, size_t number, bool cut) {
    FrameReader::Line kind = reader.Read(text, &frame);
    if (kind == FrameReader::Line::kNotJson) return Skip(samples, number, cut, &v);
    if (kind == FrameReader::Line::kNotRow) return;
    while (next_mark < marks.size() && marks[next_mark].t <= frame.t - kMarkHold_s) {
      analyzer.OnMark(marks[next_mark++], &events);
    }
    analyzer.OnFrame(frame, &events);
    last_t = frame.t;
    ++v.rows;
    events.clear();
  });
  if (v.ended) {
    while (next_mark < marks.size()) analyzer.OnMark(marks[next_mark++], &events);
    analyzer.OnJobEnd(job_end);
    analyzer.Finish(last_t, &events);
  }
  v.findings = analyzer.Findings();
  v.health = analyzer.Health();
  v.memory_trends = analyzer.MemoryTrends();
  return v;
}

}  // namespace tv

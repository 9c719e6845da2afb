#include "analysis/findings/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "analysis/findings/analyzer.h"

namespace tv {
namespace {

// Calls `line(json)` for each JSON line of `path`; counts the others. A cut
// last line (a run still being written) is not counted.
template <typename Line>
void ReadJsonLines(const std::string& path, Verdict* v, Line&& line) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  size_t number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (text.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      if (in.eof()) break;  // a last line without its newline: cut while being written
      if (v->skipped++ == 0) v->skipped_first = fmt::format("{}:{}: not JSON", path, number);
      continue;
    }
    line(j);
  }
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
  ReadJsonLines((dir / "events.jsonl").string(), &v, [&](const nlohmann::json& e) {
    Mark m;
    if (MarkFromEvent(e, &m)) marks.push_back(std::move(m));
    if (e.is_object() && e.value("type", "") == "end") v.ended = true;
  });
  std::stable_sort(marks.begin(), marks.end(),
                   [](const Mark& a, const Mark& b) { return a.t < b.t; });
  v.ended = v.ended || fs::exists(dir / "summary.json");

  Analyzer analyzer(thresholds, interval_s);
  std::vector<Event> events;  // the findings' own events, not needed here
  size_t next_mark = 0;
  Frame frame;
  double last_t = 0;
  ReadJsonLines(samples, &v, [&](const nlohmann::json& line) {
    if (!FrameFromJson(line, &frame)) return;
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
    analyzer.Finish(last_t, &events);
  }
  v.findings = analyzer.Findings();
  v.health = analyzer.Health();
  return v;
}

}  // namespace tv

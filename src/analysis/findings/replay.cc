#include "analysis/findings/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <span>
#include <stdexcept>

#include "analysis/findings/analyzer.h"
#include "core/json_shape.h"
#include "core/run_file.h"
#include "store/job_end_event.h"
#include "store/meta_record.h"

namespace tv {
namespace {

// Calls `line(text, number, cut)` for each non-empty line of `path` up to
// kMaxJsonlLineBytes (`cut`: the last line, without its newline: a run still
// being written); lines over the cap are noted in `v`. False when `path`
// does not exist; throws std::runtime_error naming it when it cannot be read.
template <typename Line>
bool ForEachLine(const std::string& path, Verdict* v, Line&& line) {
  JsonlReader reader;
  Status s = reader.Open(path);
  if (s.code() == Status::Code::kNotFound) return false;
  if (!s.ok()) throw std::runtime_error(s.message());
  JsonlReader::Line l;
  while (reader.Next(&l)) line(l.text, l.number, l.cut);
  if (!reader.status().ok()) throw std::runtime_error(reader.status().message());
  if (std::string note = LongLinesNote(reader, path); !note.empty()) {
    v->notes.push_back(std::move(note));
  }
  return true;
}

// Counts a line that is not usable (unless it is the cut last line).
void Skip(const std::string& path, size_t number, bool cut, std::string_view text,
          std::span<const JsonRule> shape, std::string_view what, Verdict* v) {
  if (cut) return;
  if (v->skipped++ == 0) {
    v->skipped_first = fmt::format("{}:{}: {}", path, number, WhyLineUnusable(text, shape, what));
  }
}

}  // namespace

RunInputs ReadRunInputs(const std::string& run_dir, Verdict* v) {
  namespace fs = std::filesystem;
  fs::path dir(run_dir);
  std::error_code ec;
  fs::path samples = dir / "samples.jsonl";
  if (!fs::exists(samples, ec) && !fs::is_symlink(samples, ec)) {
    throw std::runtime_error(fmt::format("{} has no samples.jsonl: not a run directory", run_dir));
  }
  RunInputs in;
  {
    nlohmann::json meta;
    std::string meta_path = (dir / "meta.json").string();
    Status s = ReadJsonDocument(meta_path, &meta);
    std::string shape = s.ok() ? JsonShapeError(meta, MetaShape()) : "";
    if (s.ok() && shape.empty()) {
      in.meta = MetaFromJson(meta);
      in.interval_s = in.meta.interval_s.value_or(in.interval_s);
    } else if (s.code() != Status::Code::kNotFound && !(fs::file_size(meta_path, ec) == 0 && !ec)) {
      v->notes.push_back(fmt::format("{}; left out (interval 1 s)",
                                     s.ok() ? meta_path + ": " + shape : s.message()));
    }
  }
  std::string events_path = (dir / "events.jsonl").string();
  ForEachLine(events_path, v, [&](std::string_view text, size_t number, bool cut) {
    nlohmann::json e;
    std::string why;
    if (!ParseJsonLine(text, &e, &why) || !JsonShapeError(e, EventShape()).empty()) {
      return Skip(events_path, number, cut, text, EventShape(), "an event", v);
    }
    Mark m;
    if (MarkFromEvent(e, &m)) in.marks.push_back(std::move(m));
    EndEvent end;
    OomKillEvent kills;
    if (EndEventFromJson(e, &end)) {
      in.ended = true;
      if (end.signal) in.job_end.signal = end.signal;
    } else if (OomKillEventFromJson(e, &kills)) {
      in.job_end.oom_kills = kills.count;
      in.job_end.cgroup = kills.cgroup;
    }
  });
  std::stable_sort(in.marks.begin(), in.marks.end(),
                   [](const Mark& a, const Mark& b) { return a.t < b.t; });
  in.ended = in.ended || fs::exists(dir / "summary.json", ec);
  return in;
}

struct RowReader::Impl {
  std::string path;
  Verdict* v = nullptr;
  JsonlReader lines{kMaxJsonlLineBytes, FrameReader::kPadding};
  FrameReader frames;
  bool noted = false;
};

RowReader::RowReader(const std::string& run_dir, Verdict* v) : impl_(std::make_unique<Impl>()) {
  impl_->path = (std::filesystem::path(run_dir) / "samples.jsonl").string();
  impl_->v = v;
  Status s = impl_->lines.Open(impl_->path);
  if (s.code() == Status::Code::kNotFound) {
    impl_->lines.OpenText({});  // a link to nothing: no rows
  } else if (!s.ok()) {
    throw std::runtime_error(s.message());
  }
}

RowReader::~RowReader() = default;

bool RowReader::Next(Frame* frame) {
  Impl& m = *impl_;
  JsonlReader::Line l;
  while (m.lines.Next(&l)) {
    FrameReader::Line kind = m.frames.ReadPadded(l.text, frame);
    if (kind == FrameReader::Line::kRow) return true;
    if (kind == FrameReader::Line::kNotJson) {
      Skip(m.path, l.number, l.cut, l.text, SampleRowShape(), "a row of samples.jsonl", m.v);
    }
  }
  if (!m.lines.status().ok()) throw std::runtime_error(m.lines.status().message());
  if (std::string note = LongLinesNote(m.lines, m.path); !note.empty() && !m.noted) {
    m.v->notes.push_back(std::move(note));
  }
  m.noted = true;
  return false;
}

RunReplay::RunReplay(const std::string& run_dir, const Thresholds& thresholds)
    : inputs_(ReadRunInputs(run_dir, &verdict_)),
      analyzer_(std::make_unique<Analyzer>(thresholds, inputs_.interval_s)) {
  verdict_.ended = inputs_.ended;
}

RunReplay::RunReplay(RunInputs inputs, const Thresholds& thresholds, RuleChoice rules)
    : inputs_(std::move(inputs)),
      analyzer_(std::make_unique<Analyzer>(thresholds, inputs_.interval_s, rules)) {
  verdict_.ended = inputs_.ended;
}

RunReplay::~RunReplay() = default;

void RunReplay::OnRow(const Frame& frame) {
  const std::vector<Mark>& marks = inputs_.marks;
  while (next_mark_ < marks.size() && marks[next_mark_].t <= frame.t - kMarkHold_s) {
    analyzer_->OnMark(marks[next_mark_++], &events_);
  }
  analyzer_->OnFrame(frame, &events_);
  last_t_ = frame.t;
  ++verdict_.rows;
  events_.clear();
}

Verdict RunReplay::Finish() {
  if (verdict_.ended) {
    const std::vector<Mark>& marks = inputs_.marks;
    while (next_mark_ < marks.size()) analyzer_->OnMark(marks[next_mark_++], &events_);
    analyzer_->OnJobEnd(inputs_.job_end);
    analyzer_->Finish(last_t_, &events_);
  }
  verdict_.findings = analyzer_->Findings();
  verdict_.health = analyzer_->Health();
  verdict_.memory_trends = analyzer_->MemoryTrends();
  return std::move(verdict_);
}

Verdict Replay(const std::string& run_dir, const Thresholds& thresholds) {
  RunReplay replay(run_dir, thresholds);
  RowReader rows(run_dir, replay.verdict());
  Frame frame;
  while (rows.Next(&frame)) replay.OnRow(frame);
  return replay.Finish();
}

}  // namespace tv
